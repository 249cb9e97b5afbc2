package example.lucene;

import io.pagewise.PageCache;
import io.pagewise.lucene.FileTypeCache;
import io.pagewise.lucene.FileTypeIo;
import io.pagewise.lucene.PagewiseDirectory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.SplittableRandom;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.StoredField;
import org.apache.lucene.document.StringField;
import org.apache.lucene.document.TextField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.Term;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.TermQuery;
import org.apache.lucene.util.Version;

/**
 * Uses pagewise-lucene as a Lucene application does: indexes documents into a PagewiseDirectory in many segments,
 * commits, drops the index from the page cache, force-merges it with a new IndexWriter and searches it. Checks the
 * document counts, and that the merge of an index nobody had cached left its merged segment at most 1 % cached;
 * prints the directory's counters. Exits with status 1 and a message naming the failed check.
 *
 * <p>Usage: {@code java -cp 'target/lib/*' example.lucene.Main [DIR]}, where DIR (default: the temporary directory)
 * is on a disk-backed filesystem, not tmpfs.
 */
public final class Main {
    private static final int DOCS = 40_000;
    private static final String[] WORDS = {"page", "cache", "merge", "segment", "index", "search", "disk", "memory",
        "flush", "commit", "evict", "window", "lucene", "query", "term", "field"};
    private static final double MAX_CACHED_PERCENT = 1.0;

    private Main() {}

    public static void main(String[] args) throws IOException {
        Path parent = Path.of(args.length > 0 ? args[0] : System.getProperty("java.io.tmpdir"));
        Files.createDirectories(parent);
        Path indexPath = Files.createTempDirectory(parent, "pagewise-lucene-consumer");
        try {
            run(indexPath);
        } finally {
            try (var files = Files.list(indexPath)) {
                for (Path file : (Iterable<Path>) files::iterator) Files.delete(file);
            }
            Files.delete(indexPath);
        }
    }

    private static void run(Path indexPath) throws IOException {
        System.out.println("Lucene " + Version.LATEST + ", Java " + Runtime.version() + ", index " + indexPath);
        long expectedMerge = 0;
        try (PagewiseDirectory dir = PagewiseDirectory.open(indexPath)) {
            IndexWriterConfig config = new IndexWriterConfig().setMaxBufferedDocs(2_000).setUseCompoundFile(false);
            try (IndexWriter writer = new IndexWriter(dir, config)) {
                SplittableRandom random = new SplittableRandom(42);
                for (int i = 0; i < DOCS; i++) {
                    String word = WORDS[random.nextInt(WORDS.length)];
                    if (word.equals("merge")) expectedMerge++;
                    Document doc = new Document();
                    doc.add(new StringField("id", Integer.toString(i), Field.Store.YES));
                    doc.add(new StringField("word", word, Field.Store.NO));
                    doc.add(new TextField("body", text(random), Field.Store.NO));
                    doc.add(new StoredField("payload", text(random)));
                    writer.addDocument(doc);
                }
                writer.commit();
            }
            int segmentsBefore;
            try (DirectoryReader reader = DirectoryReader.open(dir)) {
                segmentsBefore = reader.leaves().size();
            }
            for (String name : dir.listAll()) PageCache.evict(indexPath.resolve(name));

            try (IndexWriter writer = new IndexWriter(dir, new IndexWriterConfig().setUseCompoundFile(false))) {
                writer.forceMerge(1);
                writer.commit();
            }
            // Before anything reads the merged segment: what the merge itself left in the page cache.
            long bytes = 0;
            long cached = 0;
            for (FileTypeCache row : dir.cachedByFileType()) {
                System.out.println("  cached " + row);
                bytes += row.bytes();
                cached += row.cachedBytes();
            }
            for (FileTypeIo row : dir.ioByFileType()) System.out.println("  io " + row);
            double percent = 100.0 * cached / Math.max(1, bytes);
            System.out.printf("after the merge: %.2f %% of the index's %d bytes cached%n", percent, bytes);
            check(percent <= MAX_CACHED_PERCENT, String.format("the merge of an uncached index left %.2f %% of it"
                    + " cached, more than %.0f %%", percent, MAX_CACHED_PERCENT));
            try (DirectoryReader reader = DirectoryReader.open(dir)) {
                check(reader.leaves().size() == 1, "forceMerge(1) left " + reader.leaves().size() + " segments");
                check(reader.numDocs() == DOCS, "the merged index holds " + reader.numDocs() + " documents, not "
                        + DOCS);
                long found = new IndexSearcher(reader).count(new TermQuery(new Term("word", "merge")));
                check(found == expectedMerge, "word:merge finds " + found + " documents, not " + expectedMerge);
                System.out.println(segmentsBefore + " segments merged into 1; word:merge finds " + found);
            }
        }
        System.out.println("lucene consumer OK");
    }

    private static String text(SplittableRandom random) {
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < 40; i++) text.append(WORDS[random.nextInt(WORDS.length)]).append(' ');
        return text.toString();
    }

    private static void check(boolean ok, String failure) {
        if (!ok) {
            System.err.println("lucene consumer FAILED: " + failure);
            System.exit(1);
        }
    }
}

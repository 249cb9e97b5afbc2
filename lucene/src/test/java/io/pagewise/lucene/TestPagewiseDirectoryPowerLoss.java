package io.pagewise.lucene;

import com.carrotsearch.randomizedtesting.annotations.Name;
import com.carrotsearch.randomizedtesting.annotations.ParametersFactory;
import com.carrotsearch.randomizedtesting.annotations.Timeout;
import io.pagewise.AccessHint;
import io.pagewise.CacheMode;
import io.pagewise.testing.LazyFsMount;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.IntPoint;
import org.apache.lucene.document.NumericDocValuesField;
import org.apache.lucene.document.StoredField;
import org.apache.lucene.document.StringField;
import org.apache.lucene.document.TextField;
import org.apache.lucene.index.CheckIndex;
import org.apache.lucene.index.ConcurrentMergeScheduler;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.LogDocMergePolicy;
import org.apache.lucene.index.MergeScheduler;
import org.apache.lucene.index.NumericDocValues;
import org.apache.lucene.index.SerialMergeScheduler;
import org.apache.lucene.index.Term;
import org.apache.lucene.search.DocIdSetIterator;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.TermQuery;
import org.apache.lucene.store.Directory;
import org.apache.lucene.store.FSDirectory;
import org.apache.lucene.store.FilterDirectory;
import org.apache.lucene.store.IOContext;
import org.apache.lucene.store.IndexInput;
import org.apache.lucene.store.IndexOutput;
import org.apache.lucene.tests.util.LuceneTestCase;
import org.apache.lucene.tests.util.TestUtil;
import org.junit.AfterClass;
import org.junit.BeforeClass;

/**
 * Lucene makes a commit durable through {@link Directory#sync} and {@link Directory#syncMetaData}, and nothing else:
 * after a power cut the last commit must open with every document it holds, and CheckIndex must find nothing wrong.
 * LazyFS throws away whatever was not synced; the power goes right after {@link IndexWriter#commit()} returns, and
 * in the middle of a merge, with the default policy table and with tables that read and write every context in one
 * mode. What survived is read from LazyFS's backing directory, copied at the instant of the cut.
 */
@Timeout(millis = 300_000)
public class TestPagewiseDirectoryPowerLoss extends LuceneTestCase {
    private static final int COMMITS = 4;
    private static final int DOCS_PER_COMMIT = 600;
    private static final int DOCS_PER_SEGMENT = 200;
    private static final long WAIT_SECONDS = 60;
    private static final AtomicInteger INDEXES = new AtomicInteger();
    private static Path parent;
    private static LazyFsMount lazyfs;

    private final String tableName;
    private final PolicyTable table;

    public TestPagewiseDirectoryPowerLoss(@Name("policies") String tableName, PolicyTable table) {
        this.tableName = tableName;
        this.table = table;
    }

    /**
     * The default table, and one table per write mode whose DEFAULT, FLUSH and MERGE contexts all use it. Where the
     * native library is not loaded every mode but WRITEBACK would run as WRITEBACK: those tables are left out there.
     */
    @ParametersFactory
    public static Iterable<Object[]> tables() {
        List<Object[]> tables = new ArrayList<>();
        List<String> notHere = new ArrayList<>();
        PolicyTable defaults = PolicyTable.defaults();
        if (allAvailable(defaults)) tables.add(new Object[] {"defaults", defaults});
        else notHere.add("defaults");
        for (CacheMode mode : List.of(CacheMode.WRITEBACK, CacheMode.EVICT, CacheMode.DONTCACHE, CacheMode.DIRECT)) {
            FilePolicy policy = FilePolicy.of(mode, AccessHint.NORMAL);
            PolicyTable oneMode = PolicyTable.builder().policy(ContextKind.DEFAULT, policy)
                    .policy(ContextKind.FLUSH, policy).policy(ContextKind.MERGE, policy).build();
            if (allAvailable(oneMode)) tables.add(new Object[] {mode.name(), oneMode});
            else notHere.add(mode.name());
        }
        if (!notHere.isEmpty()) {
            System.out.println(TestPagewiseDirectoryPowerLoss.class.getSimpleName() + ": not run with the tables "
                    + notHere + ": their write modes need the native library, which is not loaded here");
        }
        return tables;
    }

    /** Whether the contexts that write (READ_ONCE only reads) use modes this JVM has. */
    private static boolean allAvailable(PolicyTable policies) {
        for (ContextKind kind : List.of(ContextKind.DEFAULT, ContextKind.FLUSH, ContextKind.MERGE)) {
            if (!policies.policy(kind).mode().isAvailable()) return false;
        }
        return true;
    }

    @BeforeClass
    public static void mountLazyFs() throws IOException {
        TestLines.announce(TestPagewiseDirectoryPowerLoss.class);
        parent = Files.createTempDirectory("pagewise-lazyfs-");
        lazyfs = LazyFsMount.mount(parent, TestLines::unavailable);
    }

    @AfterClass
    public static void unmountLazyFs() throws IOException {
        if (lazyfs != null) lazyfs.close();
        lazyfs = null;
        if (parent != null) deleteTree(parent);
        parent = null;
    }

    public void testCutRightAfterCommit() throws Exception {
        Path snapshot;
        // Four segments make one, so commits also sync merged segments. The merges run in the indexing thread:
        // LazyFS reads its cache's maps unlocked, and a merge thread writing while the indexing thread created a file
        // once left it answering neither (a JDK 25 run, both threads stuck on the mount until the timeout).
        try (Indexing indexing = new Indexing(4, new SerialMergeScheduler())) {
            for (int c = 0; c < COMMITS; c++) {
                indexing.add(c * DOCS_PER_COMMIT, DOCS_PER_COMMIT);
                indexing.writer.commit();
            }
            snapshot = indexing.cut();
        }
        assertLastCommit(snapshot, COMMITS * DOCS_PER_COMMIT, "cut right after commit, " + tableName);
    }

    public void testCutInTheMiddleOfAMerge() throws Exception {
        Path snapshot;
        String mergeFile;
        long mergeFileBytes;
        // The merge runs in a thread of its own, stopped while the power is cut; until then this thread only waits.
        try (Indexing indexing = new Indexing(1000, new RecordingMergeScheduler())) {
            for (int c = 0; c < COMMITS; c++) {
                indexing.add(c * DOCS_PER_COMMIT, DOCS_PER_COMMIT);
                indexing.writer.commit();
            }
            indexing.dir.stopNextMergeAfterAFile();
            indexing.writer.forceMerge(1, false);
            if (!indexing.dir.mergeStopped.await(WAIT_SECONDS, TimeUnit.SECONDS)) {
                fail("the merge wrote no whole file within " + WAIT_SECONDS + " s (" + tableName + ")");
            }
            mergeFile = indexing.dir.mergeFile;
            mergeFileBytes = indexing.dir.mergeFileBytes;
            snapshot = indexing.cut();
        }
        Path survived = snapshot.resolve(mergeFile);
        long left = Files.exists(survived) ? Files.size(survived) : -1;
        assertTrue("the cut kept all " + mergeFileBytes + " bytes of " + mergeFile + ", which the merge wrote and "
                + "nobody synced: LazyFS did not drop what it should (" + tableName + ")", left < mergeFileBytes);
        assertLastCommit(snapshot, COMMITS * DOCS_PER_COMMIT, "cut in the middle of a merge, " + tableName);
    }

    /**
     * Fails unless the index in snapshot passes CheckIndex and its last commit holds exactly the documents 0 to
     * docs - 1, each once.
     */
    private static void assertLastCommit(Path snapshot, int docs, String what) throws IOException {
        try (Directory dir = FSDirectory.open(snapshot)) {
            ByteArrayOutputStream log = new ByteArrayOutputStream();
            CheckIndex.Status status;
            try (CheckIndex check = new CheckIndex(dir)) {
                check.setInfoStream(new PrintStream(log, true, StandardCharsets.UTF_8));
                status = check.checkIndex();
            }
            if (!status.clean) {
                fail(what + ": CheckIndex is not clean after the power cut; files left: " + listing(snapshot) + "\n"
                        + log.toString(StandardCharsets.UTF_8));
            }
            try (DirectoryReader reader = DirectoryReader.open(dir)) {
                assertEquals(what + ": documents in the last commit", docs, reader.numDocs());
                BitSet seen = new BitSet(docs);
                for (LeafReaderContext leaf : reader.leaves()) {
                    NumericDocValues ids = leaf.reader().getNumericDocValues("n");
                    assertNotNull(what + ": a segment without the doc values field", ids);
                    for (int doc = ids.nextDoc(); doc != DocIdSetIterator.NO_MORE_DOCS; doc = ids.nextDoc()) {
                        int id = (int) ids.longValue();
                        assertFalse(what + ": document " + id + " twice", seen.get(id));
                        seen.set(id);
                    }
                }
                assertEquals(what + ": the first document missing", docs, seen.nextClearBit(0));
                assertEquals(what + ": documents that were never added", docs, seen.cardinality());
                IndexSearcher searcher = new IndexSearcher(reader);
                assertEquals(what + ": the last document by its id term", 1,
                        searcher.count(new TermQuery(new Term("id", Integer.toString(docs - 1)))));
            }
        }
    }

    private static String listing(Path dir) throws IOException {
        List<String> files = new ArrayList<>();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
            for (Path file : entries) files.add(file.getFileName() + " (" + Files.size(file) + " bytes)");
        }
        Collections.sort(files);
        return files.toString();
    }

    private static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) return;
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path p : (Iterable<Path>) paths.sorted(Comparator.reverseOrder())::iterator) Files.deleteIfExists(p);
        }
    }

    /** A new index on the LazyFS mount, written by an IndexWriter through PagewiseDirectory with the table. */
    private final class Indexing implements AutoCloseable {
        final Path path;
        final CuttableDirectory dir;
        final MergeScheduler merges;
        final IndexWriter writer;
        private final Random random = new Random(random().nextLong());

        Indexing(int mergeFactor, MergeScheduler merges) throws IOException {
            this.merges = merges;
            path = Files.createDirectory(lazyfs.file("index-" + INDEXES.incrementAndGet()));
            dir = new CuttableDirectory(PagewiseDirectory.builder(path).policies(table).build());
            boolean compound = random.nextBoolean();
            LogDocMergePolicy mergePolicy = new LogDocMergePolicy();
            mergePolicy.setMergeFactor(mergeFactor);
            mergePolicy.setNoCFSRatio(compound ? 1.0 : 0.0);
            IndexWriterConfig config = new IndexWriterConfig()
                    .setCodec(TestUtil.getDefaultCodec())
                    .setMaxBufferedDocs(DOCS_PER_SEGMENT)
                    .setUseCompoundFile(compound)
                    .setMergePolicy(mergePolicy)
                    .setMergeScheduler(merges)
                    .setCommitOnClose(false);
            writer = new IndexWriter(dir, config);
        }

        void add(int first, int count) throws IOException {
            for (int id = first; id < first + count; id++) {
                Document doc = new Document();
                doc.add(new StringField("id", Integer.toString(id), Field.Store.YES));
                doc.add(new NumericDocValuesField("n", id));
                doc.add(new IntPoint("point", id));
                StringBuilder body = new StringBuilder();
                for (int w = 5 + random.nextInt(25); w > 0; w--) body.append("w").append(random.nextInt(300)).append(' ');
                doc.add(new TextField("body", body.toString(), Field.Store.NO));
                byte[] payload = new byte[random.nextInt(256)];
                random.nextBytes(payload);
                doc.add(new StoredField("payload", payload));
                writer.addDocument(doc);
            }
        }

        /**
         * Cuts the power and copies what survived of the index from LazyFS's backing directory. From then on every
         * I/O of the writer through the directory fails, as the machine is off; a stopped merge goes on to fail.
         */
        Path cut() throws IOException, InterruptedException {
            if (merges instanceof RecordingMergeScheduler recording) {
                assertEquals("merges that failed before the cut", List.of(), recording.failures());
            }
            lazyfs.powerCut();
            Path backing = lazyfs.backing(path.getFileName().toString());
            Path copy = Files.createDirectory(parent.resolve("survived-" + path.getFileName()));
            try (DirectoryStream<Path> files = Files.newDirectoryStream(backing)) {
                for (Path file : files) {
                    try {
                        Files.copy(file, copy.resolve(file.getFileName()));
                    } catch (NoSuchFileException deletedMeanwhile) {
                        // a merge's or flush's file the writer deleted while this copied: not part of the commit
                    }
                }
            }
            dir.powerOff();
            return copy;
        }

        /** Drops the writer (its I/O fails once the power is off), closes the directory and deletes the index. */
        @Override
        public void close() throws IOException {
            try {
                dir.powerOff();
                try {
                    writer.rollback();
                } catch (IOException | RuntimeException afterTheCut) {
                    // The cut took even the lock file's times back to the synced ones, which Lucene's lock check
                    // takes for another process's hand: the writer gives up, as it should on a dead machine.
                    if (writer.isOpen()) throw afterTheCut;
                }
                dir.close();
            } finally {
                deleteTree(path);
            }
        }
    }

    /** A ConcurrentMergeScheduler that keeps merge failures, which follow the cut, instead of throwing them. */
    private static final class RecordingMergeScheduler extends ConcurrentMergeScheduler {
        private final List<Throwable> failures = Collections.synchronizedList(new ArrayList<>());

        @Override
        protected void handleMergeException(Throwable exc) {
            failures.add(exc);
        }

        List<Throwable> failures() {
            synchronized (failures) {
                return List.copyOf(failures);
            }
        }
    }

    /**
     * The index's directory as the writer sees it: a merge can be stopped once it has written a whole file, until
     * the power is cut; after the cut, every new input or output and every write fails.
     */
    private static final class CuttableDirectory extends FilterDirectory {
        final CountDownLatch mergeStopped = new CountDownLatch(1);
        private final CountDownLatch powerOff = new CountDownLatch(1);
        private volatile boolean stopMerge;
        volatile String mergeFile;
        volatile long mergeFileBytes;

        CuttableDirectory(Directory in) {
            super(in);
        }

        void stopNextMergeAfterAFile() {
            stopMerge = true;
        }

        void powerOff() {
            powerOff.countDown();
        }

        private void checkPower() throws IOException {
            if (powerOff.getCount() == 0) throw new IOException("the power is off");
        }

        @Override
        public IndexOutput createOutput(String name, IOContext context) throws IOException {
            checkPower();
            boolean merge = Contexts.kindOf(context) == ContextKind.MERGE;
            if (merge && stopMerge && mergeFile != null) {
                stopMerge = false;
                mergeStopped.countDown();
                try {
                    if (!powerOff.await(WAIT_SECONDS, TimeUnit.SECONDS)) {
                        throw new IOException("the stopped merge waited " + WAIT_SECONDS + " s for the power cut");
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IOException("interrupted while stopped for the power cut", e);
                }
                checkPower();
            }
            IndexOutput out = in.createOutput(name, context);
            return new PoweredOutput(out, merge && stopMerge);
        }

        @Override
        public IndexOutput createTempOutput(String prefix, String suffix, IOContext context) throws IOException {
            checkPower();
            return new PoweredOutput(in.createTempOutput(prefix, suffix, context), false);
        }

        @Override
        public IndexInput openInput(String name, IOContext context) throws IOException {
            checkPower();
            return in.openInput(name, context);
        }

        /** An output whose writes fail once the power is off; a merge's notes its file when closed. */
        private final class PoweredOutput extends IndexOutput {
            private final IndexOutput out;
            private final boolean noteWhenClosed;

            PoweredOutput(IndexOutput out, boolean noteWhenClosed) {
                super("PoweredOutput(" + out + ")", out.getName());
                this.out = out;
                this.noteWhenClosed = noteWhenClosed;
            }

            @Override
            public void writeByte(byte b) throws IOException {
                checkPower();
                out.writeByte(b);
            }

            @Override
            public void writeBytes(byte[] b, int offset, int length) throws IOException {
                checkPower();
                out.writeBytes(b, offset, length);
            }

            @Override
            public long getFilePointer() {
                return out.getFilePointer();
            }

            @Override
            public long getChecksum() throws IOException {
                return out.getChecksum();
            }

            @Override
            public void close() throws IOException {
                long bytes = out.getFilePointer();
                out.close();
                if (noteWhenClosed && bytes > 0 && mergeFile == null) {
                    mergeFileBytes = bytes;
                    mergeFile = getName();
                }
            }
        }
    }
}

package io.pagewise.lucene;

import io.pagewise.PageCache;
import io.pagewise.Residency;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.StringField;
import org.apache.lucene.document.TextField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.NoMergePolicy;
import org.apache.lucene.index.SegmentCommitInfo;
import org.apache.lucene.index.SegmentInfos;
import org.apache.lucene.index.Term;
import org.apache.lucene.index.TieredMergePolicy;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.MatchAllDocsQuery;
import org.apache.lucene.search.TermQuery;
import org.apache.lucene.tests.analysis.MockAnalyzer;
import org.apache.lucene.tests.util.LuceneTestCase;
import org.apache.lucene.tests.util.LuceneTestCase.SuppressFileSystems;
import org.apache.lucene.tests.util.TestUtil;
import org.junit.Before;
import org.junit.BeforeClass;

/**
 * An index of many segments, nobody searching it and none of it cached, is force-merged into one by a fresh
 * IndexWriter on a PagewiseDirectory with the default policies: the merged segment is not left in the page cache,
 * the merge read the old segments through pagewise, and the index holds what was indexed.
 */
@SuppressFileSystems("*")
public class TestPagewiseForceMerge extends LuceneTestCase {
    private static final int DOCS = 15_000;
    private static final int DOCS_PER_SEGMENT = 1_250;

    @BeforeClass
    public static void announce() {
        TestLines.announce(TestPagewiseForceMerge.class);
    }

    @Before
    public void needsResidency() {
        PageCacheChecks.assumeNative();
    }

    public void testForceMergeOfAColdIndexLeavesTheMergedSegmentCold() throws IOException {
        try (PagewiseDirectory dir = PagewiseDirectory.open(createTempDir())) {
            int evens = index(dir, random());
            SegmentInfos before = SegmentInfos.readLatestCommit(dir);
            assertTrue("the test indexed too few segments: " + before.size(), before.size() >= 10);
            for (String name : dir.listAll()) {
                if (!name.equals(IndexWriter.WRITE_LOCK_NAME)) PageCache.evict(PageCacheChecks.path(dir, name));
            }

            IndexWriterConfig config = new IndexWriterConfig(new MockAnalyzer(random()));
            // The production codec: the test framework's random ones include postings formats that load a whole
            // terms file into the heap when a segment opens (FST50's .tfp), and IndexWriter opens the merged segment
            // once the merge is done, through the mapped reads a search would use.
            config.setCodec(TestUtil.getDefaultCodec());
            TieredMergePolicy merges = new TieredMergePolicy();
            merges.setNoCFSRatio(0.0);
            config.setMergePolicy(merges).setUseCompoundFile(false);
            try (IndexWriter writer = new IndexWriter(dir, config)) {
                writer.forceMerge(1);
                writer.commit();
            }

            SegmentInfos after = SegmentInfos.readLatestCommit(dir);
            assertEquals("segments after forceMerge(1)", 1, after.size());
            SegmentCommitInfo merged = after.info(0);
            long resident = 0;
            long total = 0;
            List<String> files = new ArrayList<>();
            for (String name : merged.files()) {
                Residency residency = PageCache.residency(PageCacheChecks.path(dir, name));
                resident += residency.residentPages();
                total += residency.totalPages();
                files.add(name + " " + residency.residentPages() + "/" + residency.totalPages());
            }
            assertTrue("the merged segment is only " + total + " pages: " + files, total * PageCache.pageSize()
                    >= 2 << 20);
            assertTrue("the merged segment is " + PageCacheChecks.percent((double) resident / total)
                    + " cached (pages cached/total: " + files + ")", resident <= total / 100);

            long mergeReads = 0;
            for (FileTypeIo io : dir.ioByFileType()) {
                if (io.kind() == ContextKind.MERGE) mergeReads += io.bytesRead();
            }
            assertTrue("the merge read nothing through pagewise: " + dir.ioByFileType(), mergeReads > 0);

            try (DirectoryReader reader = DirectoryReader.open(dir)) {
                assertEquals(1, reader.leaves().size());
                assertEquals(DOCS, reader.numDocs());
                IndexSearcher searcher = new IndexSearcher(reader);
                assertEquals(DOCS, searcher.count(new MatchAllDocsQuery()));
                assertEquals(evens, searcher.count(new TermQuery(new Term("parity", "even"))));
                assertEquals(1, searcher.count(new TermQuery(new Term("id", "12345"))));
                assertEquals(DOCS - evens, searcher.count(new TermQuery(new Term("parity", "odd"))));
            }
        }
    }

    /** Indexes DOCS documents in segments of DOCS_PER_SEGMENT, merging none; returns how many are "even". */
    private static int index(PagewiseDirectory dir, Random random) throws IOException {
        IndexWriterConfig config = new IndexWriterConfig(new MockAnalyzer(random));
        config.setCodec(TestUtil.getDefaultCodec());
        config.setMergePolicy(NoMergePolicy.INSTANCE).setMaxBufferedDocs(DOCS_PER_SEGMENT)
                .setRAMBufferSizeMB(IndexWriterConfig.DISABLE_AUTO_FLUSH).setUseCompoundFile(false);
        int evens = 0;
        try (IndexWriter writer = new IndexWriter(dir, config)) {
            StringBuilder text = new StringBuilder();
            for (int i = 0; i < DOCS; i++) {
                Document doc = new Document();
                doc.add(new StringField("id", Integer.toString(i), Field.Store.YES));
                boolean even = random.nextBoolean();
                if (even) evens++;
                doc.add(new StringField("parity", even ? "even" : "odd", Field.Store.NO));
                text.setLength(0);
                for (int word = 0; word < 40; word++) {
                    text.append(Long.toString(random.nextInt(1 << 20), 36)).append(' ');
                }
                doc.add(new TextField("body", text.toString(), Field.Store.YES));
                writer.addDocument(doc);
            }
            writer.commit();
        }
        return evens;
    }
}

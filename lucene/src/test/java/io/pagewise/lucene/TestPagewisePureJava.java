package io.pagewise.lucene;

import io.pagewise.AccessHint;
import io.pagewise.CacheMode;
import io.pagewise.Native;
import java.io.IOException;
import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field.Store;
import org.apache.lucene.document.StringField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.Term;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.TermQuery;
import org.apache.lucene.store.IOContext;
import org.apache.lucene.store.IndexInput;
import org.apache.lucene.tests.analysis.MockAnalyzer;
import org.apache.lucene.tests.util.LuceneTestCase;
import org.junit.Before;
import org.junit.BeforeClass;

/**
 * Where the native library is not loaded, every mode that needs it runs as WRITEBACK: a directory whose table asks
 * for DIRECT and EVICT everywhere opens, indexes, merges and searches, and the first directory says so once in the
 * log, the ones after it not again.
 */
public class TestPagewisePureJava extends LuceneTestCase {
    @BeforeClass
    public static void announce() {
        TestLines.announce(TestPagewisePureJava.class);
    }

    @Before
    public void onThePureJavaPath() {
        assumeFalse("this test is for the pure-Java path (-Dpagewise.native=false); the native library is loaded ("
                + (Native.isAvailable() ? Native.binding() : "") + ")", Native.isAvailable());
    }

    private static PagewiseDirectory.Builder nativeOnlyPolicies(PagewiseDirectory.Builder builder) {
        builder.policy(ContextKind.DEFAULT, FilePolicy.of(CacheMode.DIRECT, AccessHint.RANDOM));
        builder.policy(ContextKind.READ_ONCE, FilePolicy.of(CacheMode.DIRECT, AccessHint.SEQUENTIAL));
        builder.policy(ContextKind.MERGE, FilePolicy.followingNeighbours(CacheMode.EVICT, AccessHint.SEQUENTIAL));
        builder.policy(ContextKind.FLUSH, FilePolicy.of(CacheMode.DONTCACHE, AccessHint.NORMAL));
        return builder;
    }

    public void testTheFirstDirectoryLogsOnceAndTheNextDoNot() throws Exception {
        // Other tests in this JVM may have opened a directory already: start as if none had.
        Field told = PagewiseDirectory.class.getDeclaredField("TOLD_PURE_JAVA");
        told.setAccessible(true);
        ((AtomicBoolean) told.get(null)).set(false);
        List<LogRecord> records = new ArrayList<>();
        Handler handler = new Handler() {
            @Override
            public void publish(LogRecord record) {
                synchronized (records) {
                    records.add(record);
                }
            }

            @Override
            public void flush() {}

            @Override
            public void close() {}
        };
        Logger logger = Logger.getLogger(PagewiseDirectory.class.getName());
        logger.addHandler(handler);
        try {
            try (PagewiseDirectory first = nativeOnlyPolicies(PagewiseDirectory.builder(createTempDir())).build();
                    PagewiseDirectory second = PagewiseDirectory.open(createTempDir())) {
                assertNotNull(first);
                assertNotNull(second);
            }
            try (PagewiseDirectory third = PagewiseDirectory.open(createTempDir())) {
                assertNotNull(third);
            }
        } finally {
            logger.removeHandler(handler);
        }
        assertEquals("log records: " + records, 1, records.size());
        LogRecord record = records.get(0);
        assertEquals(Level.WARNING, record.getLevel());
        assertTrue(record.getMessage(), record.getMessage().contains("WRITEBACK"));
        assertTrue(record.getMessage(), record.getMessage().contains(Native.loadError().getMessage()));
    }

    public void testNativeOnlyModesReadAndWriteAsWriteback() throws IOException {
        try (PagewiseDirectory dir = nativeOnlyPolicies(PagewiseDirectory.builder(createTempDir())).build()) {
            byte[] merged = PageCacheChecks.write(dir, "_0.doc", LuceneContexts.merge(300_000), 300_000, random());
            byte[] flushed = PageCacheChecks.write(dir, "_1.doc", LuceneContexts.flush(70_000), 70_000, random());
            for (IOContext context : new IOContext[] {IOContext.DEFAULT, IOContext.READONCE,
                    LuceneContexts.merge(1)}) {
                try (IndexInput in = dir.openInput("_0.doc", context)) {
                    assertFalse("a read on the pure-Java path is mapped: " + in, in instanceof StorageIndexInput);
                    assertArrayEquals(merged, PageCacheChecks.readWhole(in, random()));
                }
                try (IndexInput in = dir.openInput("_1.doc", context)) {
                    assertArrayEquals(flushed, PageCacheChecks.readWhole(in, random()));
                }
            }
            expectThrows(UnsupportedOperationException.class, dir::cachedByFileType);
        }
    }

    public void testAnIndexWorks() throws IOException {
        try (PagewiseDirectory dir = nativeOnlyPolicies(PagewiseDirectory.builder(createTempDir())).build()) {
            IndexWriterConfig config = new IndexWriterConfig(new MockAnalyzer(random())).setMaxBufferedDocs(100);
            try (IndexWriter writer = new IndexWriter(dir, config)) {
                for (int i = 0; i < 1000; i++) {
                    Document doc = new Document();
                    doc.add(new StringField("id", Integer.toString(i), Store.YES));
                    writer.addDocument(doc);
                }
                writer.forceMerge(1);
            }
            try (DirectoryReader reader = DirectoryReader.open(dir)) {
                assertEquals(1000, reader.numDocs());
                assertEquals(1, new IndexSearcher(reader).count(new TermQuery(new Term("id", "999"))));
            }
        }
    }
}

package io.pagewise.lucene;

import static io.pagewise.lucene.PageCacheChecks.MIB;
import static io.pagewise.lucene.PageCacheChecks.assertAtLeast;
import static io.pagewise.lucene.PageCacheChecks.assertAtMost;
import static io.pagewise.lucene.PageCacheChecks.path;
import static io.pagewise.lucene.PageCacheChecks.percent;
import static io.pagewise.lucene.PageCacheChecks.readWhole;

import io.pagewise.AccessHint;
import io.pagewise.CacheMode;
import io.pagewise.PageCache;
import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.concurrent.TimeUnit;
import org.apache.lucene.store.IOContext;
import org.apache.lucene.store.IndexInput;
import org.apache.lucene.tests.util.LuceneTestCase;
import org.apache.lucene.tests.util.LuceneTestCase.SuppressFileSystems;
import org.junit.Before;
import org.junit.BeforeClass;

/**
 * Merge and read-once reads with the default policies keep nothing they brought into the page cache, and leave what
 * was cached before; a Lucene 10 prefetch on an input read through pagewise reaches the file. Lucene's mock file
 * systems are left out: these tests measure the real file's pages.
 */
@SuppressFileSystems("*")
public class TestPagewiseReads extends LuceneTestCase {
    private static final int FILE_BYTES = 16 * MIB + 12_345;

    @BeforeClass
    public static void announce() {
        TestLines.announce(TestPagewiseReads.class);
    }

    @Before
    public void needsResidency() {
        PageCacheChecks.assumeNative();
    }

    public void testMergeReadKeepsNothingItBroughtIn() throws IOException {
        assertColdAfterRead(LuceneContexts.merge(FILE_BYTES));
    }

    public void testReadOnceReadKeepsNothingItBroughtIn() throws IOException {
        assertColdAfterRead(IOContext.READONCE);
    }

    private void assertColdAfterRead(IOContext context) throws IOException {
        try (PagewiseDirectory dir = PagewiseDirectory.open(createTempDir())) {
            byte[] written = PageCacheChecks.write(dir, "_0.fdt", IOContext.DEFAULT, FILE_BYTES, random());
            dir.sync(java.util.List.of("_0.fdt"));
            PageCache.evict(path(dir, "_0.fdt"));
            assertAtMost(dir, "_0.fdt", 0.01, "after PageCache.evict (the test's own precondition)");
            try (IndexInput in = dir.openInput("_0.fdt", context)) {
                assertTrue(in + " is not read through pagewise", in instanceof StorageIndexInput);
                assertArrayEquals(written, readWhole(in, random()));
            }
            assertAtMost(dir, "_0.fdt", 0.01, "after a whole read in " + context);
        }
    }

    public void testMergeReadLeavesACachedFileCached() throws IOException {
        try (PagewiseDirectory dir = PagewiseDirectory.open(createTempDir())) {
            PageCacheChecks.writeCached(dir, "_0.fdt", FILE_BYTES, random());
            try (IndexInput in = dir.openInput("_0.fdt", LuceneContexts.merge(FILE_BYTES))) {
                readWhole(in, random());
            }
            assertAtLeast(dir, "_0.fdt", 0.95, "after a merge read of the whole file, cached before it");
        }
    }

    /** A closed slice or clone of an input read through pagewise reads no more; the others read on. */
    public void testAClosedSliceOrCloneReadsNoMore() throws IOException {
        try (PagewiseDirectory dir = PagewiseDirectory.open(createTempDir())) {
            PageCacheChecks.write(dir, "_0.fdt", IOContext.DEFAULT, 3 * MIB, random());
            try (IndexInput in = dir.openInput("_0.fdt", LuceneContexts.merge(3 * MIB))) {
                assertTrue(in + " is not read through pagewise", in instanceof StorageIndexInput);
                IndexInput one = in.slice("one", 0, MIB);
                IndexInput two = in.slice("two", MIB, MIB);
                IndexInput clone = in.clone();
                byte expected = two.readByte();
                one.close();
                clone.close();
                expectThrows(org.apache.lucene.store.AlreadyClosedException.class, one::readInt);
                expectThrows(org.apache.lucene.store.AlreadyClosedException.class, one::readLong);
                expectThrows(org.apache.lucene.store.AlreadyClosedException.class, clone::readByte);
                two.seek(0);
                assertEquals(expected, two.readByte());
                assertEquals(MIB, in.slice("three", 2 * MIB, MIB).length());
            }
        }
    }

    /**
     * Lucene 10 calls IndexInput.prefetch before it reads; on an input in EVICT, which prefetches, the range comes
     * into the page cache and the rest of the file does not.
     */
    public void testPrefetchReadsTheRangeIntoThePageCache() throws Exception {
        Method prefetch = LuceneContexts.prefetchMethod();
        assumeTrue("IndexInput.prefetch is Lucene 10's; this is Lucene " + org.apache.lucene.util.Version.LATEST,
                prefetch != null);
        PagewiseDirectory.Builder builder = PagewiseDirectory.builder(createTempDir());
        builder.policy(ContextKind.DEFAULT, FilePolicy.of(CacheMode.EVICT, AccessHint.RANDOM));
        try (PagewiseDirectory dir = builder.build()) {
            PageCacheChecks.writeCold(dir, "_0.tim", FILE_BYTES, random());
            long offset = 4 * MIB + 4096;
            long bytes = 2 * MIB;
            try (IndexInput in = dir.openInput("_0.tim", IOContext.DEFAULT)) {
                assertTrue(in + " is not read through pagewise", in instanceof StorageIndexInput);
                IndexInput slice = in.slice("the middle", MIB, in.length() - MIB);
                try {
                    prefetch.invoke(slice, offset - MIB, bytes);
                } catch (InvocationTargetException e) {
                    throw (Exception) e.getCause();
                }
                // The prefetch queues reads; wait (bounded) for them.
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                double range;
                while ((range = PageCache.residency(path(dir, "_0.tim"), offset, bytes).percent() / 100) < 0.95
                        && System.nanoTime() < deadline) {
                    Thread.sleep(20);
                }
                assertTrue("the prefetched range is " + percent(range) + " cached", range >= 0.95);
                double after = PageCache.residency(path(dir, "_0.tim"), offset + bytes + MIB, 8 * MIB).percent()
                        / 100;
                assertTrue("the file beyond the prefetched range is " + percent(after) + " cached", after <= 0.05);
            }
        }
    }
}

package io.pagewise.policy;

import static java.nio.file.StandardOpenOption.CREATE_NEW;
import static java.nio.file.StandardOpenOption.WRITE;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.AccessHint;
import io.pagewise.CacheMode;
import io.pagewise.PageCache;
import io.pagewise.StorageFile;
import io.pagewise.internal.Mincore;
import io.pagewise.internal.NativeRawFile;
import io.pagewise.internal.RawFile;
import io.pagewise.testing.ExternalReclaim;
import io.pagewise.testing.ExternalTools;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The residency snapshot EVICT and DONTCACHE take at open is exactly the set of pages mincore sees, whether it is
 * found with cachestat or (as on kernels before 6.5) with mincore alone, and its cost follows what is cached, not
 * the size of the file: counted in system calls by the library's own counters. PageCache.residency counts the
 * same pages either way.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class PrecachedPagesTest {
    private static final long MIB = 1L << 20;
    private static final long GIB = 1L << 30;

    @TempDir
    Path dir;

    @AfterEach
    void cachestatBackOn() {
        Mincore.useCachestat(true);
    }

    /**
     * This machine's kernel also pages out cold file pages by itself (a DAMON scheme, {@link ExternalReclaim}): it
     * once took 128 pages between the snapshot and the count of PageCache.residency. A run that failed while that
     * reclaim ran is run again, at most {@link #DISTURBED_RUNS} times; a failure while it did not run fails at once.
     */
    @ParameterizedTest(name = "cachestat {0}")
    @ValueSource(booleans = {true, false})
    void snapshotHoldsExactlyThePagesMincoreSees(boolean cachestat) throws IOException {
        ExternalTools.requireNativeLibrary();
        for (int run = 1; ; run++) {
            long reclaimedBefore = ExternalReclaim.pagedOutBytes();
            try {
                snapshotMatchesMincore(cachestat);
                return;
            } catch (AssertionError e) {
                long reclaimedAfter = ExternalReclaim.pagedOutBytes();
                if (reclaimedBefore < 0 || reclaimedAfter == reclaimedBefore || run == DISTURBED_RUNS) throw e;
                System.err.println("PrecachedPagesTest: run " + run + " failed while DAMON paged out "
                        + (reclaimedAfter - reclaimedBefore) + " bytes (" + e.getMessage() + "); running again");
            }
        }
    }

    private static final int DISTURBED_RUNS = 3;

    private void snapshotMatchesMincore(boolean cachestat) throws IOException {
        long size = 4 * GIB + 100; // the last page is partial
        Path path = sparseImage(size, 0, 2 * GIB, 4 * GIB - 8 * MIB);
        // Whole 64 MiB ranges cached (one of them in a hole: zero pages), pages scattered in data and holes, and
        // the partial last page.
        cache(path, new long[][] {{128 * MIB, 64 * MIB}, {GIB + 12 * 1024, 4096}, {GIB + 40 * MIB, 3 * MIB},
                {2 * GIB + 3 * MIB, MIB}, {size - 100, 100}});
        Mincore.useCachestat(cachestat);
        try (RawFile file = NativeRawFile.open(path, 0)) {
            if (cachestat && file.cachedPages(0, size) < 0) {
                ExternalTools.unavailable("this kernel has no cachestat (Linux 6.5+)", "the cachestat path must be tested");
            }
            long[] truth = residentRuns(file, size);
            assertTrue(truth.length >= 10, "setup: five cached ranges, got " + Arrays.toString(truth));
            long[] before = Mincore.syscallCounts();
            PrecachedPages snapshot = PrecachedPages.snapshot(file);
            long[] after = Mincore.syscallCounts();
            assertArrayEquals(truth, residentRuns(file, size), "setup: the page cache changed during the snapshot");

            assertArrayEquals(truth, runs(snapshot, size), "cached runs as [start, end) pairs: " + Arrays.toString(truth)
                    + " from mincore, " + Arrays.toString(runs(snapshot, size)) + " in the snapshot");
            assertEquals(pages(truth), PageCache.residency(path).residentPages(), "PageCache.residency's count");
            long mincoreCalls = after[0] - before[0];
            long cachestatCalls = after[1] - before[1];
            if (cachestat) {
                // Only the 64 MiB pieces holding both cached and uncached pages are read page by page.
                assertTrue(mincoreCalls <= 4, mincoreCalls + " mincore calls");
                assertTrue(cachestatCalls > 1 && cachestatCalls <= 64, cachestatCalls + " cachestat calls");
            } else {
                assertEquals(0, cachestatCalls, "cachestat turned off");
                assertEquals((size + 256 * MIB - 1) / (256 * MIB), mincoreCalls, "mincore over the whole file");
            }
        }
    }

    @Test
    void openingAHugeSparseFileCostsWhatItsCacheHolds() throws IOException {
        ExternalTools.requireNativeLibrary();
        long size = 1L << 40; // 1 TiB: mincore alone would make 4096 calls
        Path path = sparseImage(size, 0, size / 2, size - 8 * MIB);
        try (RawFile file = NativeRawFile.open(path, 0)) {
            if (file.cachedPages(0, size) < 0) {
                ExternalTools.unavailable("this kernel has no cachestat (Linux 6.5+)", "the cachestat path must be tested");
            }
        }
        long[] cold = callsToOpen(path);
        assertEquals(0, cold[0], "mincore calls for a file with nothing cached");
        assertEquals(1, cold[1], "cachestat calls for a file with nothing cached");

        cache(path, new long[][] {{size / 2 + 4096, 2 * MIB}, {size - 3 * MIB, 3 * MIB}});
        long[] warm = callsToOpen(path);
        assertTrue(warm[0] <= 2, warm[0] + " mincore calls: one per 64 MiB piece partly cached");
        assertTrue(warm[1] <= 1 + 2 * 16 * 4, warm[1] + " cachestat calls: one, then 16 per level below (4) per cached range");
    }

    /** mincore and cachestat calls made by opening path with EVICT (reading nothing) and closing it. */
    private static long[] callsToOpen(Path path) throws IOException {
        long[] before = Mincore.syscallCounts();
        try (StorageFile file = StorageFile.open(path, CacheMode.EVICT)) {
            assertEquals(CacheMode.EVICT, file.cacheMode());
        }
        long[] after = Mincore.syscallCounts();
        return new long[] {after[0] - before[0], after[1] - before[1]};
    }

    /** A new sparse file of size with 8 MiB of data at each offset, none of it cached. */
    private Path sparseImage(long size, long... dataAt) throws IOException {
        Path path = dir.resolve("sparse-" + size + ".raw");
        Files.deleteIfExists(path); // a run made again
        try (StorageFile file = StorageFile.open(path, CacheMode.WRITEBACK, WRITE, CREATE_NEW)) {
            file.resize(size);
            ByteBuffer data = ByteBuffer.allocateDirect((int) (8 * MIB));
            while (data.hasRemaining()) data.put((byte) (data.position() * 31 + 7));
            for (long at : dataAt) file.write(data.clear(), at);
        }
        assertEquals(size, Files.size(path), "setup: the data lies within the size");
        PageCache.evict(path);
        assertEquals(0, PageCache.residency(path).residentPages(), "setup: the image starts uncached");
        return path;
    }

    /** Reads each {offset, length} of path without readahead, so that exactly those pages get cached. */
    private static void cache(Path path, long[][] ranges) throws IOException {
        try (StorageFile file = StorageFile.open(path, CacheMode.WRITEBACK)) {
            file.advise(AccessHint.RANDOM);
            for (long[] range : ranges) {
                ByteBuffer buffer = ByteBuffer.allocateDirect((int) range[1]);
                assertEquals(range[1], file.read(buffer, range[0]));
            }
        }
    }

    /** The resident runs of the whole file as mincore reports them, page by page. */
    private static long[] residentRuns(RawFile file, long size) throws IOException {
        int page = Mincore.pageSize();
        long[] runs = new long[0];
        long runStart = -1;
        for (long chunk = 0; chunk < size; chunk += GIB) {
            long length = Math.min(GIB, size - chunk);
            byte[] bits = file.residentBitmap(chunk, length);
            for (long i = 0; i < (length + page - 1) / page; i++) {
                boolean resident = (bits[(int) (i / 8)] & (1 << (i % 8))) != 0;
                long at = chunk + i * page;
                if (resident && runStart < 0) {
                    runStart = at;
                } else if (!resident && runStart >= 0) {
                    runs = append(runs, runStart, at);
                    runStart = -1;
                }
            }
        }
        return runStart >= 0 ? append(runs, runStart, size) : runs;
    }

    /** Pages the runs cover, the last one partial. */
    private static long pages(long[] runs) {
        int page = Mincore.pageSize();
        long pages = 0;
        for (int i = 0; i < runs.length; i += 2) pages += (runs[i + 1] - runs[i] + page - 1) / page;
        return pages;
    }

    private static long[] runs(PrecachedPages snapshot, long size) {
        return snapshot.within(0, size).stream().flatMapToLong(Arrays::stream).toArray();
    }

    private static long[] append(long[] runs, long start, long end) {
        long[] longer = Arrays.copyOf(runs, runs.length + 2);
        longer[runs.length] = start;
        longer[runs.length + 1] = end;
        return longer;
    }
}

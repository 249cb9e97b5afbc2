package io.pagewise;

import static java.nio.file.StandardOpenOption.CREATE;
import static java.nio.file.StandardOpenOption.READ;
import static java.nio.file.StandardOpenOption.TRUNCATE_EXISTING;
import static java.nio.file.StandardOpenOption.WRITE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.pagewise.internal.Mincore;
import io.pagewise.testing.ExternalReclaim;
import io.pagewise.testing.ExternalTools;
import io.pagewise.testing.ResidencyCheck;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * EVICT and DONTCACHE leave at most 1 % of a 1 GiB file in the page cache after sequential reads, sequential
 * writes and shuffled multi-threaded reads, and leave alone what was cached before they opened the file.
 * Residency is read with our mincore and cross-checked with vmtouch.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class EvictResidencyTest {
    private static final long SIZE = 1L << 30;
    private static final int CHUNK = 1 << 20;
    /** How many runs of a residency check a reclaim of the kernel's own may disturb before the test gives up. */
    private static final int DISTURBED_RUNS = 3;
    private static Path dir;
    private static Path image;

    @BeforeAll
    static void createImage() throws IOException {
        dir = Files.createTempDirectory("pagewise-residency");
        image = dir.resolve("image.raw");
        writeSequentially(image, CacheMode.EVICT);
    }

    @AfterAll
    static void removeImage() throws IOException {
        Files.deleteIfExists(image);
        Files.deleteIfExists(dir.resolve("written.raw"));
        Files.deleteIfExists(dir);
    }

    @BeforeEach
    void evictImage() throws IOException {
        PageCache.evict(image);
        assertEquals(0, PageCache.residency(image).residentPages(), "image must start cold");
    }

    @ParameterizedTest
    @EnumSource(value = CacheMode.class, names = {"EVICT", "DONTCACHE"})
    void sequentialReadLeavesAtMostOnePercent(CacheMode mode) throws IOException {
        long checksum = 0;
        try (StorageFile file = StorageFile.open(image, mode)) {
            assertEquals(mode, file.cacheMode());
            ByteBuffer buffer = ByteBuffer.allocateDirect(256 << 10);
            for (long at = 0; at < SIZE; at += buffer.capacity()) {
                assertEquals(buffer.capacity(), file.read(buffer.clear(), at));
                checksum += buffer.getLong(0);
            }
        }
        assertEquals(expectedChecksum(256 << 10), checksum, "read the data written");
        assertResidentAtMostOnePercent(image);
    }

    /**
     * A window read again after it was retired is tracked again: the second visit's pages are dropped when it is
     * retired once more, not left for the sweep at close. (A request skips the tracker's lock when its window was
     * touched lately; a window retired since must not count as touched.)
     */
    @Test
    void aWindowReadAgainAfterItWasRetiredIsEvictedAgain() throws IOException {
        long window = 2L << 20;
        ByteBuffer small = ByteBuffer.allocateDirect(4096);
        try (StorageFile file = StorageFile.open(image, CacheMode.EVICT)) {
            file.read(small.clear(), 0);
            for (int w = 1; w <= 12; w++) file.read(small.clear(), w * window); // window 0 retired
            for (long at = 0; at < window; at += 4096) file.read(small.clear(), at); // again, all of it
            for (int w = 20; w <= 60; w++) file.read(small.clear(), w * window); // retired again, and rechecked
            Residency first = PageCache.residency(image, 0, window);
            assertTrue(first.residentPages() <= first.totalPages() / 100,
                    "window 0, read again, still cached before close: " + first);
        }
    }

    /**
     * The kernel drops a folio once an RWF_DONTCACHE read has copied from it, even from part of a large folio, so
     * 256 KiB uncached reads made the disk read 1.34x the file. DONTCACHE must read each byte from disk once.
     */
    @ParameterizedTest
    @ValueSource(ints = {64 << 10, 256 << 10, 2 << 20})
    void dontcacheReadsEachByteFromDiskOnce(int requestSize) throws IOException {
        DiskReads reads = DiskReads.of(image);
        long length = 512L << 20;
        long bytesBefore = reads.bytes();
        try (StorageFile file = StorageFile.open(image, CacheMode.DONTCACHE)) {
            assertEquals(CacheMode.DONTCACHE, file.cacheMode());
            ByteBuffer buffer = ByteBuffer.allocateDirect(requestSize);
            for (long at = 0; at < length; at += requestSize) assertEquals(requestSize, file.read(buffer.clear(), at));
        }
        double ratio = (reads.bytes() - bytesBefore) / (double) length;
        assertTrue(ratio > 0.9 && ratio < 1.1, String.format("read %.2fx of the %d MiB from disk in %d KiB requests",
                ratio, length >> 20, requestSize >> 10));
        assertResidentAtMostOnePercent(image);
    }

    /** The sysfs stat file of the block device that holds path, or a skip (a failure under CI=true). */
    private static Path blockDeviceStat(Path path) throws IOException {
        long dev = (Long) Files.getAttribute(path, "unix:dev");
        long major = ((dev >> 8) & 0xfff) | ((dev >>> 32) & ~0xfffL);
        long minor = (dev & 0xff) | ((dev >> 12) & ~0xffL & 0xffffffffL);
        Path stat = Path.of("/sys/dev/block/" + major + ":" + minor + "/stat");
        if (!Files.exists(stat)) {
            ExternalTools.unavailable("no block device statistics for " + path + " (" + stat + ")",
                    "the test directory must be on a block device");
        }
        return stat;
    }

    private static long sectorsRead(Path stat) throws IOException {
        return Long.parseLong(Files.readString(stat).trim().split("\\s+")[2]);
    }

    /**
     * Bytes read from storage: this process's own ({@code read_bytes} of /proc/self/io, readahead included, as the
     * kernel charges it to the task that submits it), so that another process reading the same disk cannot push
     * the count up; the whole disk's sectors where the kernel keeps no per-task counts.
     */
    private record DiskReads(Path diskStat) {
        private static final Path OWN = Path.of("/proc/self/io");

        static DiskReads of(Path file) throws IOException {
            return Files.isReadable(OWN) ? new DiskReads(null) : new DiskReads(blockDeviceStat(file));
        }

        long bytes() throws IOException {
            if (diskStat != null) return sectorsRead(diskStat) * 512;
            for (String line : Files.readAllLines(OWN)) {
                if (line.startsWith("read_bytes:")) return Long.parseLong(line.substring(11).trim());
            }
            throw new IOException(OWN + " has no read_bytes line");
        }
    }

    @ParameterizedTest
    @EnumSource(value = CacheMode.class, names = {"EVICT", "DONTCACHE"})
    void sequentialWriteLeavesAtMostOnePercent(CacheMode mode) throws IOException {
        Path written = dir.resolve("written.raw");
        writeSequentially(written, mode);
        assertResidentAtMostOnePercent(written);
        try (StorageFile file = StorageFile.open(written, CacheMode.DIRECT)) {
            ByteBuffer buffer = ByteBuffer.allocateDirect(CHUNK);
            for (long at : new long[] {0, SIZE / 2, SIZE - CHUNK}) {
                assertEquals(CHUNK, file.read(buffer.clear(), at));
                assertEquals(at / CHUNK, buffer.getLong(0), "chunk at " + at + " holds its index");
            }
        }
        Files.delete(written);
    }

    @ParameterizedTest
    @EnumSource(value = CacheMode.class, names = {"EVICT", "DONTCACHE"})
    void shuffledMultiThreadedReadLeavesAtMostOnePercent(CacheMode mode) throws Exception {
        int block = 64 << 10;
        List<Long> offsets = shuffledOffsets(block, 42);
        AtomicInteger next = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try (StorageFile file = StorageFile.open(image, mode)) {
            List<Future<Long>> results = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                results.add(pool.submit(() -> {
                    ByteBuffer buffer = ByteBuffer.allocateDirect(block);
                    long count = 0;
                    for (int i; (i = next.getAndIncrement()) < offsets.size(); count++) {
                        assertEquals(block, file.read(buffer.clear(), offsets.get(i)));
                    }
                    return count;
                }));
            }
            long total = 0;
            for (Future<Long> result : results) total += result.get(2, TimeUnit.MINUTES);
            assertEquals(offsets.size(), total);
        } finally {
            pool.shutdownNow();
        }
        assertResidentAtMostOnePercent(image);
    }

    @ParameterizedTest
    @EnumSource(value = CacheMode.class, names = {"EVICT", "DONTCACHE"})
    void shuffledMultiThreadedWriteLeavesAtMostOnePercent(CacheMode mode) throws Exception {
        Path written = dir.resolve("written.raw");
        int block = 64 << 10;
        List<Long> offsets = shuffledOffsets(block, 43);
        AtomicInteger next = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try (StorageFile file = StorageFile.open(written, mode, READ, WRITE, CREATE, TRUNCATE_EXISTING)) {
            List<Future<?>> results = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                results.add(pool.submit(() -> {
                    ByteBuffer buffer = ByteBuffer.allocateDirect(block);
                    for (int i; (i = next.getAndIncrement()) < offsets.size(); ) {
                        file.write(buffer.clear().putLong(0, offsets.get(i)), offsets.get(i));
                    }
                    return null;
                }));
            }
            for (Future<?> result : results) result.get(2, TimeUnit.MINUTES);
            file.flush();
        } finally {
            pool.shutdownNow();
        }
        assertResidentAtMostOnePercent(written);
        try (StorageFile file = StorageFile.open(written, CacheMode.DIRECT)) {
            ByteBuffer buffer = ByteBuffer.allocateDirect(block);
            for (long at : new long[] {0, SIZE / 3 / block * block, SIZE - block}) {
                assertEquals(block, file.read(buffer.clear(), at));
                assertEquals(at, buffer.getLong(0), "block at " + at + " holds its offset");
            }
        }
        Files.delete(written);
    }

    private boolean whollyCached(long[][] ranges) throws IOException {
        for (long[] range : ranges) {
            Residency residency = PageCache.residency(image, range[0], range[1]);
            if (residency.residentPages() < residency.totalPages()) return false;
        }
        return true;
    }

    /**
     * With cachestat finding the cached ranges, and with mincore alone (kernels before 6.5). This machine's kernel
     * also pages out cold file pages by itself (a DAMON scheme, {@link ExternalReclaim}); a run that lost pages while
     * that reclaim ran is run again, at most {@link #DISTURBED_RUNS} times. A loss while it did not run fails at once.
     */
    @ParameterizedTest(name = "cachestat {0}")
    @ValueSource(booleans = {true, false})
    void evictLeavesPagesCachedBeforeOpenAlone(boolean cachestat) throws IOException {
        // A 64 MiB-aligned head, which cachestat finds whole, and a range across 64 MiB boundaries in the middle.
        long[][] cachedBefore = {{0, 64L << 20}, {(300L << 20) + 12288, 70L << 20}};
        List<String> disturbed = new ArrayList<>();
        for (int run = 1; ; run++) {
            long reclaimedBefore = ExternalReclaim.pagedOutBytes();
            cacheWholly(cachedBefore);
            Mincore.useCachestat(cachestat);
            try (StorageFile file = StorageFile.open(image, CacheMode.EVICT)) {
                ByteBuffer buffer = ByteBuffer.allocateDirect(CHUNK);
                for (long at = 0; at < SIZE; at += CHUNK) file.read(buffer.clear(), at);
            } finally {
                Mincore.useCachestat(true);
            }
            long cachedBytes = 0;
            List<Residency> shortRanges = new ArrayList<>();
            for (long[] range : cachedBefore) {
                Residency after = PageCache.residency(image, range[0], range[1]);
                if (after.residentPages() < after.totalPages()) shortRanges.add(after);
                cachedBytes += after.residentBytes();
            }
            long reclaimedAfter = ExternalReclaim.pagedOutBytes();
            if (shortRanges.isEmpty()) {
                Residency all = PageCache.residency(image);
                double restPercent = 100.0 * (all.residentBytes() - cachedBytes) / SIZE;
                assertTrue(restPercent <= ResidencyCheck.LIMIT_PERCENT, "the rest evicted, got " + restPercent + " % cached");
                return;
            }
            String lost = "pages cached before open stay cached: " + shortRanges;
            if (reclaimedBefore < 0 || reclaimedAfter == reclaimedBefore) fail(lost + " (no reclaim of the kernel's ran)");
            disturbed.add("run " + run + ": " + shortRanges + ", while DAMON paged out "
                    + (reclaimedAfter - reclaimedBefore) + " bytes");
            System.err.println("EvictResidencyTest: " + disturbed.get(disturbed.size() - 1) + "; running again");
            if (run == DISTURBED_RUNS) fail(lost + "; every run was disturbed: " + disturbed);
            PageCache.evict(image);
        }
    }

    /**
     * Writes to a file someone else has cached are left to the kernel's writeback: the windows are not written back
     * and waited for as the writer passes (nothing of them is to be dropped), so rewriting hot pages does not write
     * them to the disk each time. 128 MiB in 64 KiB writes: with the windows written back behind the writer at most
     * 16 of its 64 windows would still be dirty at the end.
     */
    @ParameterizedTest
    @EnumSource(value = CacheMode.class, names = {"EVICT", "DONTCACHE"})
    void writesToPagesCachedBeforeOpenAreNotWrittenBackByUs(CacheMode mode) throws IOException {
        long size = 128L << 20;
        Path hot = cachedByOthers("hot.raw", size);
        try {
            Residency before = PageCache.residency(hot);
            assertEquals(before.totalPages(), before.residentPages(), "setup: all cached before open");
            ByteBuffer buffer = ByteBuffer.allocateDirect(64 << 10);
            try (StorageFile file = StorageFile.open(hot, mode, READ, WRITE)) {
                for (long at = 0; at < size; at += buffer.capacity()) {
                    buffer.clear().putLong(0, at);
                    file.write(buffer, at);
                }
                CacheState written = PageCache.cacheState(hot).orElseThrow(() -> new AssertionError("needs cachestat"));
                long pages = size / written.pageSize();
                assertTrue(written.dirty() >= pages / 2, "most written pages still dirty, left to the kernel: " + written);
            }
            Residency after = PageCache.residency(hot);
            assertEquals(after.totalPages(), after.residentPages(), "pages cached before open stay cached");
            try (StorageFile file = StorageFile.open(hot, CacheMode.WRITEBACK)) {
                for (long at : new long[] {0, size / 2, size - buffer.capacity()}) {
                    assertEquals(buffer.capacity(), file.read(buffer.clear(), at));
                    assertEquals(at, buffer.getLong(0), "written at " + at);
                }
            }
        } finally {
            PageCache.evict(hot);
            Files.deleteIfExists(hot);
        }
    }

    /**
     * A file someone else had cached, cut to nothing and written again: its old pages are gone with the cut, so what
     * is written afterwards is the writer's own and goes as any other (at most 1 % cached after close).
     */
    @ParameterizedTest
    @EnumSource(value = CacheMode.class, names = {"EVICT", "DONTCACHE"})
    void aFileCutAfterOpenIsNoLongerSomeoneElsesCache(CacheMode mode) throws IOException {
        long size = 64L << 20;
        Path hot = cachedByOthers("cut.raw", size);
        try {
            try (StorageFile file = StorageFile.open(hot, mode, READ, WRITE)) {
                file.resize(0);
                ByteBuffer buffer = ByteBuffer.allocateDirect(16 << 10);
                for (long at = 0; at < size; at += buffer.capacity()) file.write(buffer.clear(), at);
                file.flush();
            }
            ResidencyCheck.assertAtMostOnePercent(hot, "left cached after a cut and a rewrite");
        } finally {
            PageCache.evict(hot);
            Files.deleteIfExists(hot);
        }
    }

    /** A file of zeros, on disk and then read wholly into the cache, as another program's would be. */
    private Path cachedByOthers(String name, long size) throws IOException {
        Path file = dir.resolve(name);
        try (StorageFile f = StorageFile.open(file, CacheMode.WRITEBACK, READ, WRITE, CREATE, TRUNCATE_EXISTING)) {
            f.write(ByteBuffer.allocateDirect((int) size), 0);
            f.flush();
        }
        PageCache.touch(file);
        return file;
    }

    /** Reads the ranges, a few times at most, until they are wholly cached: reclaim may take a page just read. */
    private void cacheWholly(long[][] ranges) throws IOException {
        for (int attempt = 0; attempt < 5 && !whollyCached(ranges); attempt++) {
            try (StorageFile reader = StorageFile.open(image, CacheMode.WRITEBACK)) {
                reader.advise(AccessHint.RANDOM); // no readahead: exactly these ranges
                for (long[] range : ranges) {
                    ByteBuffer buffer = ByteBuffer.allocateDirect((int) range[1]);
                    assertEquals(range[1], reader.read(buffer, range[0]));
                }
            }
        }
        for (long[] range : ranges) {
            Residency before = PageCache.residency(image, range[0], range[1]);
            assertEquals(before.totalPages(), before.residentPages(), "setup: cached before open " + before);
        }
    }

    @ParameterizedTest
    @EnumSource(value = CacheMode.class, names = {"EVICT", "DONTCACHE"})
    void characterDevicesHaveNothingToEvict(CacheMode mode) throws IOException {
        try (StorageFile zero = StorageFile.open(Path.of("/dev/zero"), mode, READ, WRITE)) {
            ByteBuffer buffer = ByteBuffer.allocateDirect(4 << 20);
            for (int i = 0; i < 16; i++) assertEquals(buffer.capacity(), zero.read(buffer.clear(), (long) i << 22));
            zero.write(buffer.clear(), 0);
        } // close must not fail trying to write back or drop what a character device never cached
    }

    @Test
    void dontcacheFallsBackToEvictWhereUnsupported() throws IOException {
        Path file = Files.createTempFile(ExternalTools.tmpfs(), "pagewise-dontcache", ".raw");
        try {
            Files.write(file, new byte[8192]);
            try (StorageFile f = StorageFile.open(file, CacheMode.DONTCACHE, READ, WRITE)) {
                assertEquals(CacheMode.DONTCACHE, f.requestedMode());
                assertEquals(CacheMode.EVICT, f.cacheMode(), "tmpfs refuses RWF_DONTCACHE");
                f.write(ByteBuffer.wrap(new byte[] {7, 8, 9}), 100);
                ByteBuffer back = ByteBuffer.allocate(3);
                assertEquals(3, f.read(back, 100));
                assertEquals(8, back.get(1));
            }
        } finally {
            Files.delete(file);
        }
    }

    /** Every block offset of the image, in a shuffled order. */
    private static List<Long> shuffledOffsets(int block, long seed) {
        List<Long> offsets = new ArrayList<>();
        for (long at = 0; at < SIZE; at += block) offsets.add(at);
        Collections.shuffle(offsets, new Random(seed));
        return offsets;
    }

    private static void writeSequentially(Path path, CacheMode mode) throws IOException {
        try (StorageFile file = StorageFile.open(path, mode, READ, WRITE, CREATE, TRUNCATE_EXISTING)) {
            ByteBuffer buffer = ByteBuffer.allocateDirect(CHUNK);
            byte[] noise = new byte[CHUNK];
            new Random(7).nextBytes(noise);
            buffer.put(noise);
            for (long at = 0; at < SIZE; at += CHUNK) {
                buffer.clear().putLong(0, at / CHUNK);
                file.write(buffer, at);
            }
            file.flush();
        }
    }

    /** Sum of the first long of each block as written by writeSequentially. */
    private static long expectedChecksum(int block) {
        byte[] noise = new byte[CHUNK];
        new Random(7).nextBytes(noise);
        ByteBuffer pattern = ByteBuffer.wrap(noise);
        long sum = 0;
        for (long at = 0; at < SIZE; at += block) {
            sum += at % CHUNK == 0 ? at / CHUNK : pattern.getLong((int) (at % CHUNK));
        }
        return sum;
    }

    private static void assertResidentAtMostOnePercent(Path path) throws IOException {
        ResidencyCheck.assertAtMostOnePercent(path, "left in the page cache");
    }
}

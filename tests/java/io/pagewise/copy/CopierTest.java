package io.pagewise.copy;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.CacheMode;
import io.pagewise.Extent;
import io.pagewise.StorageFile;
import io.pagewise.backends.FileDevice;
import io.pagewise.backends.MemoryDevice;
import io.pagewise.backends.SyntheticDevices;
import io.pagewise.device.BlockDevice;
import io.pagewise.testing.ExternalTools;
import io.pagewise.testing.ResidencyCheck;
import io.pagewise.testing.TestData;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** {@link Copier} through the Java API: content, holes, zero handling, progress, failures and cancelling. */
@Timeout(60)
class CopierTest {
    private static final long MiB = 1 << 20;
    private static final long SIZE = 32 * MiB;
    /** Data islands of the test image; the 4 KiB at ZERO_DATA, inside an island, are written as zeros. */
    private static final long[] ISLANDS = {0, 5 * MiB, 5 * MiB + 300 * 1024, 17 * MiB, SIZE - 64 * 1024};
    private static final long ZERO_DATA = 17 * MiB + 16 * 1024;

    @TempDir
    Path dir;

    private Path sparseImage(String name) throws IOException {
        Path file = dir.resolve(name);
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
            raf.setLength(SIZE);
            byte[] data = new byte[64 * 1024];
            Random random = new Random(11);
            for (long at : ISLANDS) {
                random.nextBytes(data);
                raf.seek(at);
                raf.write(data);
            }
            raf.seek(ZERO_DATA);
            raf.write(new byte[4096]);
        }
        return file;
    }

    private static List<Extent> dataExtents(Path file) throws IOException {
        try (StorageFile f = StorageFile.open(file)) {
            return f.extents(0, f.size()).stream().filter(e -> !e.hole()).toList();
        }
    }

    private static long allocatedBytes(Path file) throws IOException {
        ExternalTools.require("stat");
        return Long.parseLong(ExternalTools.run(10, "stat", "-c", "%b", file.toString()).assertOk("stat").stdout().strip()) * 512;
    }

    private CopyResult copy(Path from, Path to, CopyOptions options) throws IOException {
        try (BlockDevice src = FileDevice.open(from, CacheMode.WRITEBACK);
             BlockDevice dst = FileDevice.openOrCreate(to, CacheMode.WRITEBACK, src.size())) {
            return new Copier(options).copy(src, dst);
        }
    }

    @Test
    void fileToNewFileCopiesDataAndKeepsHolesAndZeroBlocksUnallocated() throws Exception {
        Path src = sparseImage("src.img");
        Path dst = dir.resolve("dst.img");
        CopyResult r = copy(src, dst, new CopyOptions());
        assertArrayEquals(Files.readAllBytes(src), Files.readAllBytes(dst));
        assertEquals(SIZE, Files.size(dst));
        assertEquals(ISLANDS.length * 64 * 1024 - 4096, r.dataBytes(), r.toString());
        assertEquals(SIZE - r.dataBytes(), r.skippedBytes(), r.toString());
        // Every allocated byte of the destination is source data; the written zero block became a hole.
        for (Extent e : dataExtents(dst)) {
            assertTrue(dataExtents(src).stream().anyMatch(s -> s.offset() <= e.offset() && e.end() <= s.end()), e.toString());
            assertFalse(e.offset() <= ZERO_DATA && ZERO_DATA < e.end(), "zero block allocated: " + e);
        }
        assertTrue(allocatedBytes(dst) <= allocatedBytes(src) - 4096, allocatedBytes(dst) + " vs " + allocatedBytes(src));
    }

    @Test
    void existingDestinationGetsHolesPunchedOrZerosWrittenWhenAllocated() throws Exception {
        Path src = sparseImage("src.img");
        byte[] garbage = new byte[(int) SIZE];
        new Random(3).nextBytes(garbage);
        Path punched = dir.resolve("punched.img");
        Files.write(punched, garbage);
        CopyResult r = copy(src, punched, new CopyOptions());
        assertArrayEquals(Files.readAllBytes(src), Files.readAllBytes(punched));
        assertTrue(r.zeroedBytes() > 0 && r.skippedBytes() == 0, r.toString());
        assertTrue(allocatedBytes(punched) < SIZE / 2, "holes punched: " + allocatedBytes(punched));

        Path allocated = dir.resolve("allocated.img");
        Files.write(allocated, garbage);
        copy(src, allocated, new CopyOptions().allocated(true));
        assertArrayEquals(Files.readAllBytes(src), Files.readAllBytes(allocated));
        assertEquals(List.of(new Extent(0, SIZE, false)), dataExtents(allocated));
    }

    @Test
    void allocatedAllocatesEveryByteOfANewDestinationAndOfOneSaidToBeZero() throws Exception {
        Path src = sparseImage("src.img");
        Path created = dir.resolve("created.img");
        CopyResult r = copy(src, created, new CopyOptions().allocated(true));
        assertArrayEquals(Files.readAllBytes(src), Files.readAllBytes(created));
        assertEquals(0, r.skippedBytes(), r.toString());
        assertEquals(SIZE, r.dataBytes() + r.zeroedBytes(), r.toString());
        // st_blocks counts the unwritten extents that ZERO_RANGE leaves, which SEEK_HOLE may still call holes.
        assertTrue(allocatedBytes(created) >= SIZE, "allocated " + allocatedBytes(created) + " of " + SIZE);

        Path zeroed = dir.resolve("zeroed.img");
        try (RandomAccessFile raf = new RandomAccessFile(zeroed.toFile(), "rw")) {
            raf.setLength(SIZE);
        }
        copy(src, zeroed, new CopyOptions().allocated(true).destinationIsZero(true));
        assertArrayEquals(Files.readAllBytes(src), Files.readAllBytes(zeroed));
        assertTrue(allocatedBytes(zeroed) >= SIZE, "allocated " + allocatedBytes(zeroed) + " of " + SIZE);
    }

    @Test
    void destinationIsZeroSkipsZeroRangesEntirely() throws Exception {
        Path src = sparseImage("src.img");
        Path dst = dir.resolve("dst.img");
        byte[] ones = new byte[(int) SIZE];
        java.util.Arrays.fill(ones, (byte) 1);
        Files.write(dst, ones);
        CopyResult r = copy(src, dst, new CopyOptions().destinationIsZero(true));
        assertEquals(0, r.zeroedBytes());
        // The promise was false here, so the untouched ranges still hold the old bytes: proof they were skipped.
        assertEquals(1, Files.readAllBytes(dst)[(int) (2 * MiB)]);
    }

    @Test
    void sparseDetectionOffWritesZeroBlocksAsData() throws Exception {
        Path src = sparseImage("src.img");
        Path dst = dir.resolve("dst.img");
        CopyResult r = copy(src, dst, new CopyOptions().sparseBlock(0));
        assertEquals(ISLANDS.length * 64 * 1024, r.dataBytes(), r.toString());
        assertArrayEquals(Files.readAllBytes(src), Files.readAllBytes(dst));
    }

    @Test
    void requestSizesThatAreNoMultipleOfAPageWork() throws Exception {
        Path src = sparseImage("src.img");
        for (int size : new int[] {512, 1000, 6000, 65536 + 512}) {
            Path dst = dir.resolve("dst-" + size + ".img");
            copy(src, dst, new CopyOptions().requestSize(size));
            assertArrayEquals(Files.readAllBytes(src), Files.readAllBytes(dst), "request size " + size);
        }
    }

    @Test
    void patternHoldsEachWordsOffsetAtAnyAlignment() throws Exception {
        BlockDevice pattern = SyntheticDevices.pattern(MiB);
        ByteBuffer aligned = ByteBuffer.allocate(64);
        pattern.readFully(aligned, 4096);
        for (int i = 0; i < 8; i++) assertEquals(4096 + 8L * i, aligned.getLong(8 * i));
        ByteBuffer odd = ByteBuffer.allocate(20);
        pattern.readFully(odd, 4099);
        for (int i = 0; i < 20; i++) assertEquals(aligned.get(3 + i), odd.get(i), "byte " + i);
    }

    @Test
    void progressIsMonotonicAndEndsAtTheSize() throws Exception {
        List<Long> seen = new CopyOnWriteArrayList<>();
        AtomicReference<String> wrongTotal = new AtomicReference<>();
        CopyProgress listener = (done, total) -> {
            if (total != 64 * MiB) wrongTotal.set("total " + total);
            seen.add(done);
        };
        new Copier(new CopyOptions().requests(1).progress(listener))
                .copy(SyntheticDevices.pattern(64 * MiB), SyntheticDevices.discard());
        assertEquals(null, wrongTotal.get());
        assertTrue(seen.size() > 10, seen.toString());
        for (int i = 1; i < seen.size(); i++) assertTrue(seen.get(i) >= seen.get(i - 1), seen.toString());
        assertEquals(64 * MiB, seen.get(seen.size() - 1));
    }

    /**
     * Many workers whose reads take random times finish their pieces out of order, and a listener that takes a
     * little time itself (as a terminal does): it must still see one call at a time, each further than the last.
     */
    @Test
    void progressStaysMonotonicWithManyWorkersFinishingOutOfOrder() throws Exception {
        long size = 8 * MiB;
        BlockDevice pattern = SyntheticDevices.pattern(size);
        BlockDevice jittery = new BlockDevice() {
            @Override public String name() { return "jittery"; }
            @Override public long size() { return size; }
            @Override public List<Extent> extents(long offset, long length, int maxExtents) throws IOException {
                return pattern.extents(offset, length, maxExtents);
            }
            @Override public void readFully(ByteBuffer dst, long offset) throws IOException {
                LockSupport.parkNanos(ThreadLocalRandom.current().nextLong(500_000));
                pattern.readFully(dst, offset);
            }
        };
        List<Long> seen = new ArrayList<>();
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger overlapping = new AtomicInteger();
        CopyProgress listener = (done, total) -> {
            if (inside.getAndIncrement() != 0) overlapping.incrementAndGet();
            LockSupport.parkNanos(ThreadLocalRandom.current().nextLong(50_000));
            synchronized (seen) {
                seen.add(done);
            }
            inside.decrementAndGet();
        };
        new Copier(new CopyOptions().requests(32).requestSize(16 * 1024).progress(listener))
                .copy(jittery, SyntheticDevices.discard());
        synchronized (seen) {
            assertTrue(seen.size() > 100, "calls: " + seen.size());
            for (int i = 1; i < seen.size(); i++) {
                if (seen.get(i) <= seen.get(i - 1)) {
                    throw new AssertionError("call " + i + " went back from " + seen.get(i - 1) + " to " + seen.get(i)
                            + " (of " + seen.size() + " calls)");
                }
            }
            assertEquals(size, seen.get(seen.size() - 1));
        }
        assertEquals(0, overlapping.get(), "calls that overlapped another");
    }

    @Test
    void readFailureStopsTheCopyAndNamesTheOffset() {
        BlockDevice failing = new BlockDevice() {
            @Override public String name() { return "flaky"; }
            @Override public long size() { return 16 * MiB; }
            @Override public List<Extent> extents(long offset, long length, int maxExtents) { return List.of(new Extent(offset, length, false)); }
            @Override public void readFully(ByteBuffer dst, long offset) throws IOException {
                if (offset == 9 * MiB) throw new IOException("medium error");
                dst.position(dst.limit());
            }
        };
        CopyException e = assertThrows(CopyException.class,
                () -> new Copier(new CopyOptions()).copy(failing, SyntheticDevices.discard()));
        assertEquals(9 * MiB, e.offset());
        assertTrue(e.getMessage().contains("reading flaky at offset 9437184") && e.getMessage().contains("medium error"),
                e.getMessage());
    }

    @Test
    void cancelStopsARunningCopy() throws Exception {
        BlockDevice slow = new BlockDevice() {
            @Override public String name() { return "slow"; }
            @Override public long size() { return 1L << 40; }
            @Override public List<Extent> extents(long offset, long length, int maxExtents) { return List.of(new Extent(offset, length, false)); }
            @Override public void readFully(ByteBuffer dst, long offset) throws IOException {
                try {
                    Thread.sleep(5);
                } catch (InterruptedException e) {
                    throw new IOException(e);
                }
                dst.position(dst.limit());
            }
        };
        Copier copier = new Copier(new CopyOptions());
        Thread canceller = new Thread(() -> {
            try {
                Thread.sleep(300);
            } catch (InterruptedException ignored) {
                return;
            }
            copier.cancel();
        });
        canceller.start();
        Copier.CopyCancelledException e = assertThrows(Copier.CopyCancelledException.class,
                () -> copier.copy(slow, SyntheticDevices.discard()));
        assertTrue(e.getMessage().startsWith("copy cancelled after "), e.getMessage());
        assertTrue(copier.bytesDone() > 0 && copier.bytesDone() < (1L << 40));
        canceller.join();
    }

    @Test
    void evictModesLeaveTheDestinationUncached() throws Exception {
        ExternalTools.requireNativeLibrary();
        Path src = TestData.randomFile(dir.resolve("random.img"), 5, (int) (64 * MiB));
        Path dst = dir.resolve("dst.img");
        try (BlockDevice s = FileDevice.open(src, CacheMode.EVICT);
             BlockDevice d = FileDevice.openOrCreate(dst, CacheMode.EVICT, s.size())) {
            new Copier(new CopyOptions()).copy(s, d);
        }
        ResidencyCheck.assertAtMostOnePercent(dst, "destination");
        assertArrayEquals(TestData.random(5, (int) (64 * MiB)), Files.readAllBytes(dst));
    }

    @Test
    void aCopierRunsOneCopy() throws Exception {
        Copier copier = new Copier(new CopyOptions());
        CopyResult first = copier.copy(SyntheticDevices.pattern(1 << 20), SyntheticDevices.discard());
        assertEquals(1 << 20, first.size());
        IllegalStateException again = assertThrows(IllegalStateException.class,
                () -> copier.copy(SyntheticDevices.pattern(1 << 20), SyntheticDevices.discard()));
        assertTrue(again.getMessage().contains("make a new one"), again.getMessage());
        assertEquals(1 << 20, copier.bytesDone(), "the first copy's count stands");
    }
    /**
     * A source ending inside a block of a larger destination that takes whole blocks only: its data, or its hole,
     * reaches the destination through that block written whole, and the rest of the block keeps what it held.
     * The checksum is the source's alone.
     */
    @Test
    void aSourceEndingInsideABlockOfALargerDestinationWritesThatBlockWhole() throws Exception {
        int length = 3 * (int) MiB + 700;
        Path sparse = dir.resolve("sparse-tail.img");
        byte[] head = new byte[(int) MiB];
        new Random(12).nextBytes(head);
        try (RandomAccessFile raf = new RandomAccessFile(sparse.toFile(), "rw")) {
            raf.write(head);
            raf.setLength(length); // the rest is a hole, up to the middle of a block
        }
        byte[] dense = new byte[length];
        new Random(13).nextBytes(dense);
        MemoryDevice denseSource = new MemoryDevice(length);
        denseSource.write(ByteBuffer.wrap(dense), 0, false);
        byte[] sparseBytes = Arrays.copyOf(head, length);
        for (boolean holeAtTheEnd : new boolean[] {false, true}) {
            MemoryDevice memory = new MemoryDevice(4 * (int) MiB);
            byte[] old = new byte[4 * (int) MiB];
            Arrays.fill(old, (byte) 0x33);
            memory.write(ByteBuffer.wrap(old), 0, false);
            Copier copier = new Copier(new CopyOptions().checksum(BlockHash.sha256()));
            try (BlockDevice source = holeAtTheEnd ? FileDevice.open(sparse, CacheMode.WRITEBACK) : denseSource) {
                copier.copy(source, new BlocksOnly(memory, 4096));
            }
            byte[] expected = holeAtTheEnd ? sparseBytes : dense;
            byte[] after = new byte[4 * (int) MiB];
            memory.readFully(ByteBuffer.wrap(after), 0);
            assertArrayEquals(expected, Arrays.copyOf(after, length), "the source's bytes, hole at the end " + holeAtTheEnd);
            for (int at = length; at < after.length; at++) {
                if (after[at] != 0x33) throw new AssertionError("byte " + at + " past the copy changed: " + after[at]);
            }
            MemoryDevice exact = new MemoryDevice(length);
            exact.write(ByteBuffer.wrap(expected), 0, false);
            Copier reference = new Copier(new CopyOptions().checksum(BlockHash.sha256()));
            reference.copy(exact, SyntheticDevices.discard());
            assertArrayEquals(reference.checksum(), copier.checksum(), "the checksum is the source's");
        }
    }
    /**
     * Into a device that takes whole 64 KiB blocks only, a source mapped in 4 KiB pieces: data grows to whole blocks
     * (the zeros of a hole beside it copied as data) and only whole blocks of a hole are zeroed.
     */
    @Test
    void holesAndDataSmallerThanTheDestinationsBlockGoInWholeBlocks() throws Exception {
        int size = (int) MiB;
        Path sparse = dir.resolve("small-extents.img");
        byte[] expected = new byte[size];
        Random random = new Random(14);
        try (RandomAccessFile raf = new RandomAccessFile(sparse.toFile(), "rw")) {
            raf.setLength(size);
            for (int at : new int[] {0, 512 * 1024 + 4096, size - 8192}) {
                byte[] data = new byte[4096];
                random.nextBytes(data);
                raf.seek(at);
                raf.write(data);
                System.arraycopy(data, 0, expected, at, data.length);
            }
        }
        assertTrue(dataExtents(sparse).size() >= 2, "setup: the file has holes " + dataExtents(sparse));
        MemoryDevice memory = filled(size, (byte) 0x33);
        try (BlockDevice source = FileDevice.open(sparse, CacheMode.WRITEBACK)) {
            new Copier(new CopyOptions()).copy(source, new BlocksOnly(memory, 64 * 1024));
        }
        byte[] after = new byte[size];
        memory.readFully(ByteBuffer.wrap(after), 0);
        assertArrayEquals(expected, after);
    }

    /** A destination whose last block is short takes the copy's last piece through to its own end. */
    @Test
    void aSourceEndingInsideTheShortLastBlockOfTheDestinationWritesThroughToItsEnd() throws Exception {
        byte[] data = new byte[9000];
        new Random(15).nextBytes(data);
        MemoryDevice source = new MemoryDevice(data.length);
        source.write(ByteBuffer.wrap(data), 0, false);
        MemoryDevice memory = filled(10000, (byte) 0x33);
        new Copier(new CopyOptions()).copy(source, new BlocksOnly(memory, 4096));
        byte[] after = new byte[10000];
        memory.readFully(ByteBuffer.wrap(after), 0);
        assertArrayEquals(data, Arrays.copyOf(after, data.length));
        for (int at = data.length; at < after.length; at++) assertEquals(0x33, after[at], "byte " + at + " past the copy");
    }

    /**
     * An incremental copy from a record at 512-byte granularity into a device that takes whole 4 KiB blocks only: the
     * blocks the changes touch are copied whole, whole unchanged blocks are skipped, and nothing unaligned is sent.
     */
    @Test
    void changesFinerThanTheDestinationsBlockAreCopiedAsWholeBlocks() throws Exception {
        int size = 64 * 1024 + 1000; // a short last block too
        byte[] old = new byte[size];
        new Random(16).nextBytes(old);
        byte[] now = old.clone();
        long[][] changed = {{1000, 500}, {4096 + 512, 512}, {20000, 9000}, {size - 700, 300}};
        Random random = new Random(17);
        for (long[] c : changed) {
            for (int at = (int) c[0]; at < c[0] + c[1]; at++) now[at] = (byte) random.nextInt();
        }
        MemoryDevice source = new MemoryDevice(size);
        source.write(ByteBuffer.wrap(now), 0, false);
        MemoryDevice memory = new MemoryDevice(size);
        memory.write(ByteBuffer.wrap(old), 0, false);
        io.pagewise.device.ChangeTracker record = new io.pagewise.device.ChangeTracker() {
            @Override public String bitmapName() { return "fine"; }

            @Override public List<Extent> changedRuns(long offset, long length, int maxRuns) {
                List<Extent> runs = new ArrayList<>();
                long at = offset;
                for (long[] c : changed) {
                    long start = Math.max(at, c[0] / 512 * 512);
                    long end = Math.min(offset + length, (c[0] + c[1] + 511) / 512 * 512);
                    if (end <= at) continue;
                    if (start > at) runs.add(new Extent(at, Math.min(start, offset + length) - at, true));
                    if (start >= offset + length) break;
                    runs.add(new Extent(start, end - start, false));
                    at = end;
                }
                if (at < offset + length) runs.add(new Extent(at, offset + length - at, true));
                return runs.subList(0, Math.min(maxRuns, runs.size()));
            }
        };
        CopyResult result = new Copier(new CopyOptions()).copy(source, new BlocksOnly(memory, 4096), record);
        byte[] after = new byte[size];
        memory.readFully(ByteBuffer.wrap(after), 0);
        assertArrayEquals(now, after);
        // The blocks touched: [0, 8 KiB), [16 KiB, 32 KiB) and the short last block; the rest is skipped unread.
        assertEquals(8192 + 16384 + (size - 65536), result.dataBytes() + result.zeroedBytes() + result.skippedBytes(),
                result.toString());
    }

    private static MemoryDevice filled(int size, byte value) {
        MemoryDevice memory = new MemoryDevice(size);
        byte[] old = new byte[size];
        Arrays.fill(old, value);
        memory.write(ByteBuffer.wrap(old), 0, false);
        return memory;
    }
}

package io.pagewise.filters;

import static io.pagewise.testing.TestData.random;
import static io.pagewise.testing.TestData.readAll;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.Extent;
import io.pagewise.backends.MemoryDevice;
import io.pagewise.device.BlockDevice;
import io.pagewise.device.Capabilities;
import io.pagewise.device.Capability;
import io.pagewise.device.FilterDevice;
import io.pagewise.device.ZeroFlag;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The overlay against a model: the base is never written, reads see every change, the map survives a reopen. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class CowFilterTest {
    private static final int SIZE = 256 * 1024 + 1000; // a last block shorter than the others
    private static final int BLOCK = 4096;

    @TempDir
    Path dir;

    /** A base filled with a pattern, which reports [0, 64K) as data and the rest as a hole; read-only. */
    private static BlockDevice base(byte[] content) throws IOException {
        MemoryDevice memory = new MemoryDevice(content.length);
        memory.write(ByteBuffer.wrap(content), 0, false);
        return new ReadOnlyFilter(new FilterDevice(memory) {
            @Override
            public Capabilities capabilities() {
                return super.capabilities().with(Capability.EXTENTS, Capability.HOLES);
            }

            @Override
            public List<Extent> extents(long offset, long length, int maxExtents) {
                List<Extent> out = new ArrayList<>();
                long split = 65536;
                if (offset < split) out.add(new Extent(offset, Math.min(split, offset + length) - offset, false));
                if (offset + length > split && out.size() < maxExtents) {
                    long from = Math.max(offset, split);
                    out.add(new Extent(from, offset + length - from, true));
                }
                return out;
            }
        });
    }

    @Test
    void randomChangesMatchAModelAndTheBaseIsNeverWritten() throws IOException {
        byte[] original = random(1, SIZE);
        byte[] model = original.clone();
        BlockDevice base = base(original.clone());
        Random random = new Random(2);
        try (CowFilter cow = CowFilter.temporary(base, BLOCK)) {
            for (int i = 0; i < 2000; i++) {
                int offset = random.nextInt(SIZE);
                int length = 1 + random.nextInt(Math.min(3 * BLOCK, SIZE - offset));
                switch (random.nextInt(4)) {
                    case 0: case 1: {
                        byte[] data = random(i, length);
                        ByteBuffer src = ByteBuffer.wrap(data);
                        cow.write(new ByteBuffer[] {src}, offset, random.nextBoolean());
                        assertEquals(length, src.position(), "the write moved the position to the limit");
                        System.arraycopy(data, 0, model, offset, length);
                        break;
                    }
                    case 2:
                        cow.zero(offset, length, random.nextBoolean() ? ZeroFlag.TRIM : ZeroFlag.NONE);
                        java.util.Arrays.fill(model, offset, offset + length, (byte) 0);
                        break;
                    default:
                        cow.trim(offset, length, false);
                        java.util.Arrays.fill(model, offset, offset + length, (byte) 0);
                }
                if (i % 100 == 0) assertArrayEquals(model, readAll(cow), "after change " + i);
            }
            assertArrayEquals(model, readAll(cow));
            assertArrayEquals(original, readAll(base), "the base is unchanged");
            assertNull(cow.overlay(), "a temporary overlay has no file to name");
        }
    }

    @Test
    void extentsMergeTheBaseMapWithTheOverlay() throws IOException {
        byte[] original = random(3, SIZE);
        try (CowFilter cow = CowFilter.temporary(base(original), BLOCK)) {
            assertEquals(List.of(new Extent(0, 65536, false), new Extent(65536, SIZE - 65536, true)),
                    cow.extents(0, SIZE, 100), "before any write, the base's map");
            cow.write(ByteBuffer.wrap(new byte[10]), 100_000, false);          // block 24 becomes data
            cow.zero(8192, 8192, ZeroFlag.NONE);                               // blocks 2 and 3 read as zeros
            cow.trim(200_000, 100, false);                                     // part of block 48: written zeros
            List<Extent> expected = List.of(new Extent(0, 8192, false), new Extent(8192, 8192, true),
                    new Extent(16384, 65536 - 16384, false), new Extent(65536, 24 * BLOCK - 65536, true),
                    new Extent(24 * BLOCK, BLOCK, false), new Extent(25 * BLOCK, 48 * BLOCK - 25 * BLOCK, true),
                    new Extent(48 * BLOCK, BLOCK, false), new Extent(49 * BLOCK, SIZE - 49 * BLOCK, true));
            assertEquals(expected, cow.extents(0, SIZE, 100));
            assertEquals(expected.subList(0, 3), cow.extents(0, SIZE, 3), "stops after maxExtents runs");
            assertEquals(List.of(new Extent(9000, 16384 - 9000, true), new Extent(16384, 1000, false)),
                    cow.extents(9000, 16384 - 9000 + 1000, 10), "a range that starts inside a run");
            assertEquals(2, cow.blocksZeroed());
        }
    }

    /**
     * Many writers, each owning some bytes of every block, meeting at a barrier before each block so that they
     * read-modify-write it at once, over a base slow to read; then the blocks are zeroed (read-modify-write again from zeros), and again.
     */
    @Test
    void concurrentWritersToOneBlockKeepEachOthersBytes() throws Exception {
        int writers = 8;
        int slice = BLOCK / writers;
        int blocks = SIZE / BLOCK;
        byte[] original = random(4, SIZE);
        // A slow base (a remote one, say) keeps every writer inside its read-modify-write at once.
        BlockDevice slowBase = new FilterDevice(base(original)) {
            @Override
            public void readFully(ByteBuffer dst, long offset) throws IOException {
                super.readFully(dst, offset);
                try {
                    Thread.sleep(2); // after the data was taken, as a remote read
                } catch (InterruptedException e) {
                    throw new java.io.InterruptedIOException();
                }
            }
        };
        try (CowFilter cow = CowFilter.temporary(slowBase, BLOCK)) {
            ExecutorService pool = Executors.newFixedThreadPool(writers);
            try {
                for (int round = 0; round < 3; round++) {
                    CyclicBarrier together = new CyclicBarrier(writers);
                    int value = round * 10;
                    List<Future<?>> done = new ArrayList<>();
                    for (int w = 0; w < writers; w++) {
                        int writer = w;
                        done.add(pool.submit(() -> {
                            byte[] mine = new byte[slice];
                            java.util.Arrays.fill(mine, (byte) (value + writer + 1));
                            for (int block = 0; block < blocks; block++) {
                                together.await(10, TimeUnit.SECONDS);
                                cow.write(ByteBuffer.wrap(mine), (long) block * BLOCK + (long) writer * slice, false);
                            }
                            return null;
                        }));
                    }
                    for (Future<?> f : done) f.get(30, TimeUnit.SECONDS);
                    byte[] after = readAll(cow);
                    for (int i = 0; i < blocks * BLOCK; i++) {
                        int writer = (i % BLOCK) / slice;
                        if (after[i] != value + writer + 1) {
                            throw new AssertionError("round " + round + ": byte " + i + " is " + after[i] + ", writer "
                                    + writer + "'s was lost");
                        }
                    }
                    cow.zero(0, SIZE, ZeroFlag.NONE);
                }
            } finally {
                pool.shutdownNow();
            }
        }
    }

    @Test
    void aKeptOverlayReopensWithItsMap() throws IOException {
        byte[] original = random(5, SIZE);
        Path overlay = dir.resolve("disk.overlay");
        byte[] model = original.clone();
        try (CowFilter cow = CowFilter.open(base(original), overlay, 8192)) {
            byte[] data = random(6, 20_000);
            cow.write(ByteBuffer.wrap(data), 70_000, false);
            System.arraycopy(data, 0, model, 70_000, data.length);
            cow.zero(0, 16384, ZeroFlag.NONE);
            java.util.Arrays.fill(model, 0, 16384, (byte) 0);
            assertEquals(overlay, cow.overlay());
        }
        assertTrue(Files.size(overlay) > SIZE, "the overlay holds the blocks, a header and the map");
        try (CowFilter again = CowFilter.open(base(original), overlay, 0)) {
            assertEquals(8192, again.blockSize(), "the overlay keeps its block size");
            assertArrayEquals(model, readAll(again), "the writes and zeroes before the close are there");
            assertEquals(List.of(new Extent(0, 16384, true), new Extent(16384, 11 * 8192 - 16384, false),
                    new Extent(11 * 8192, 8192, true)),
                    again.extents(0, 12 * 8192, 10), "the map survived: zeroed blocks are holes, written ones data");
        }
        IllegalArgumentException otherSize = assertThrows(IllegalArgumentException.class,
                () -> CowFilter.open(base(random(7, SIZE + 4096)), overlay, 0));
        assertTrue(otherSize.getMessage().contains(overlay.toString()), otherSize.getMessage());
        IllegalArgumentException otherBlock = assertThrows(IllegalArgumentException.class,
                () -> CowFilter.open(base(original), overlay, 4096));
        assertTrue(otherBlock.getMessage().contains("blocksize=8192"), otherBlock.getMessage());
        Path stranger = Files.write(dir.resolve("not-an-overlay"), random(8, 5000));
        IllegalArgumentException notOverlay = assertThrows(IllegalArgumentException.class,
                () -> CowFilter.open(base(original), stranger, 0));
        assertTrue(notOverlay.getMessage().contains("is not an overlay"), notOverlay.getMessage());
    }

    @Test
    void theMapIsWrittenAtFlushSoThatAReopenSeesFlushedWrites() throws IOException {
        byte[] original = random(9, SIZE);
        Path overlay = dir.resolve("flushed.overlay");
        CowFilter cow = CowFilter.open(base(original), overlay, BLOCK);
        byte[] data = random(10, BLOCK);
        cow.write(ByteBuffer.wrap(data), 0, false);
        cow.flush();
        // A second filter over the same file, as after a crash: it sees what was flushed.
        try (CowFilter reader = CowFilter.open(base(original), overlay, 0)) {
            byte[] first = new byte[BLOCK];
            reader.readFully(ByteBuffer.wrap(first), 0);
            assertArrayEquals(data, first);
        } finally {
            cow.close();
        }
    }

    @Test
    void capabilitiesAreAWritableDiskOverAReadOnlyBase() throws IOException {
        try (CowFilter cow = CowFilter.temporary(base(new byte[SIZE]), BLOCK)) {
            // a memory base does not say it starts zeroed
            assertEquals(Capabilities.WRITES.with(Capability.EXTENTS, Capability.HOLES, Capability.MULTI_CONN),
                    cow.capabilities());
            assertEquals(BLOCK, cow.preferredBlockSize());
        }
        IllegalArgumentException bad = assertThrows(IllegalArgumentException.class,
                () -> CowFilter.temporary(new MemoryDevice(4096), 1000));
        assertTrue(bad.getMessage().contains("blocksize=1000"), bad.getMessage());
    }
}

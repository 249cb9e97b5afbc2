package io.pagewise.filters;

import static io.pagewise.testing.TestData.random;
import static io.pagewise.testing.TestData.readAll;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.backends.MemoryDevice;
import io.pagewise.device.BlockDevice;
import io.pagewise.device.FilterDevice;
import io.pagewise.device.ZeroFlag;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Whatever the caller asks, the device below sees only aligned calls within the limits, and the data is right. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class BlockSizeFilterTest {
    private static final int MIN = 512;
    private static final int MAXDATA = 8192;
    private static final int MAXLEN = 16384;

    /** A memory device that records every call that is unaligned or too long, and counts the calls. */
    private static final class Strict extends FilterDevice {
        final ConcurrentLinkedQueue<String> violations = new ConcurrentLinkedQueue<>();
        final AtomicLong calls = new AtomicLong();
        final long slowNanos;

        Strict(int size, long slowNanos) {
            super(new MemoryDevice(size));
            this.slowNanos = slowNanos;
        }

        private void check(String op, long offset, long length, long max) {
            calls.incrementAndGet();
            if (offset % MIN != 0 || length % MIN != 0 || length > max || length == 0) {
                violations.add(op + " at " + offset + " (+" + length + ")");
            }
        }

        @Override
        public void readFully(ByteBuffer dst, long offset) throws IOException {
            check("read", offset, dst.remaining(), MAXDATA);
            super.readFully(dst, offset);
            // Slow after the data was taken, as a remote read: a writer that read it is long in coming back.
            if (slowNanos > 0) java.util.concurrent.locks.LockSupport.parkNanos(slowNanos);
        }

        @Override
        public void write(ByteBuffer src, long offset, boolean fua) throws IOException {
            check("write", offset, src.remaining(), MAXDATA);
            super.write(src, offset, fua);
        }

        @Override
        public void zero(long offset, long length, Set<ZeroFlag> flags) throws IOException {
            check("zero", offset, length, MAXLEN);
            super.zero(offset, length, flags);
        }

        @Override
        public void trim(long offset, long length, boolean fua) throws IOException {
            check("trim", offset, length, MAXLEN);
            super.trim(offset, length, fua);
        }
    }

    @Test
    void unalignedAndLongRequestsReachTheDeviceAlignedAndSplit() throws IOException {
        int size = 200 * 1024;
        Strict strict = new Strict(size + 100, 0);
        BlockSizeFilter filter = new BlockSizeFilter(strict, MIN, MAXDATA, MAXLEN);
        assertEquals(size, filter.size(), "the size is rounded down to a whole block");
        byte[] model = new byte[size];
        Random random = new Random(11);
        for (int i = 0; i < 1500; i++) {
            int offset = random.nextInt(size);
            int length = 1 + random.nextInt(Math.min(40_000, size - offset));
            switch (random.nextInt(4)) {
                case 0: case 1: {
                    byte[] data = random(i, length);
                    filter.write(ByteBuffer.wrap(data), offset, random.nextBoolean());
                    System.arraycopy(data, 0, model, offset, length);
                    break;
                }
                case 2:
                    filter.zero(offset, length, ZeroFlag.NONE);
                    Arrays.fill(model, offset, offset + length, (byte) 0);
                    break;
                default: {
                    ByteBuffer dst = ByteBuffer.allocate(length);
                    filter.readFully(new ByteBuffer[] {dst}, offset);
                    assertArrayEquals(Arrays.copyOfRange(model, offset, offset + length), dst.array(),
                            "read at " + offset + " (+" + length + ")");
                }
            }
        }
        assertArrayEquals(model, readAll(filter));
        filter.trim(100, 50_000, false); // only whole blocks reach the device; contents are unspecified after
        assertEquals(List.of(), new ArrayList<>(strict.violations), "calls the device should not have seen");
        assertTrue(strict.calls.get() > 3000, "calls: " + strict.calls.get());
    }

    @Test
    void theSizesAreAdvertised() throws IOException {
        BlockSizeFilter filter = new BlockSizeFilter(new MemoryDevice(1 << 20), 4096, 65536, 1 << 20);
        assertEquals(4096, filter.minimumBlockSize());
        assertEquals(4096, filter.preferredBlockSize());
        assertEquals(65536, filter.maximumBlockSize());
        BlockDevice coarse = new FilterDevice(new MemoryDevice(1 << 20)) {
            @Override
            public int minimumBlockSize() { return 4096; }
        };
        assertEquals(4096, new BlockSizeFilter(coarse, 512, 65536, 65536).minimumBlockSize(),
                "never below the device's own minimum");
        IllegalArgumentException bad = assertThrows(IllegalArgumentException.class,
                () -> new BlockSizeFilter(new MemoryDevice(4096), 4096, 6000, 4096));
        assertTrue(bad.getMessage().contains("maxdata=6000"), bad.getMessage());
    }

    /**
     * Writers that each own a few bytes of every block, meeting at a barrier before each block, over a device slow
     * to read: each read-modify-write must see the others' bytes. One more writer writes whole blocks beside them.
     */
    @Test
    void concurrentUnalignedWritersKeepEachOthersBytes() throws Exception {
        int writers = 4;
        int slice = MIN / writers;
        int blocks = 64;
        Strict strict = new Strict(blocks * MIN * 2, 5_000_000);
        BlockSizeFilter filter = new BlockSizeFilter(strict, MIN, MAXDATA, MAXLEN);
        ExecutorService pool = Executors.newFixedThreadPool(writers + 1);
        try {
            CyclicBarrier together = new CyclicBarrier(writers);
            List<Future<?>> done = new ArrayList<>();
            for (int w = 0; w < writers; w++) {
                int writer = w;
                done.add(pool.submit(() -> {
                    byte[] mine = new byte[slice];
                    Arrays.fill(mine, (byte) (writer + 1));
                    for (int block = 0; block < blocks; block++) {
                        together.await(10, TimeUnit.SECONDS);
                        filter.write(ByteBuffer.wrap(mine), (long) block * 2 * MIN + (long) writer * slice, false);
                    }
                    return null;
                }));
            }
            done.add(pool.submit(() -> {
                byte[] whole = new byte[MIN];
                Arrays.fill(whole, (byte) 99);
                for (int block = 0; block < blocks; block++) filter.write(ByteBuffer.wrap(whole), (2L * block + 1) * MIN, false);
                return null;
            }));
            for (Future<?> f : done) f.get(30, TimeUnit.SECONDS);
        } finally {
            pool.shutdownNow();
        }
        byte[] after = readAll(filter);
        for (int i = 0; i < after.length; i++) {
            int block = i / MIN;
            int expected = block % 2 == 1 ? 99 : (i % MIN) / slice + 1;
            if (after[i] != expected) throw new AssertionError("byte " + i + " is " + after[i] + ", not " + expected);
        }
        assertEquals(List.of(), new ArrayList<>(strict.violations));
    }
}

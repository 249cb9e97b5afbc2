package io.pagewise.copy;

import io.pagewise.Extent;
import io.pagewise.device.BlockDevice;
import io.pagewise.internal.BufferPool;
import io.pagewise.internal.Uninterruptibly;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The {@link BlockHash} of a whole device, as {@code blksum} computes it: holes (as the device's map says) are added
 * without being read, and data is read in requests of up to {@link #REQUEST_SIZE} by several threads, each of which
 * hashes what it read.
 *
 * <pre>{@code
 * try (BlockDevice disk = FileDevice.open(Path.of("disk.img"), CacheMode.DIRECT)) {
 *     String sum = BlockHash.hex(Checksums.of(disk, BlockHash.sha256(), 4));
 * }
 * }</pre>
 */
public final class Checksums {
    /** The longest read, a whole number of default blocks. */
    public static final int REQUEST_SIZE = 1 << 20;
    /** Runs asked of the device's map at once. */
    private static final int MAX_EXTENTS = 4096;
    private static final long[] END = new long[0];

    private Checksums() {}

    /**
     * {@return the checksum of all of device}
     *
     * @param device  what to read; it is not closed
     * @param hash    the construction's digest and block size
     * @param threads how many reads (and hashes) run at once, at least 1
     * @throws IOException when the device cannot be read or mapped; the message names it and the offset
     * @throws InterruptedIOException when the calling thread is interrupted
     */
    public static byte[] of(BlockDevice device, BlockHash hash, int threads) throws IOException {
        if (threads < 1) throw new IllegalArgumentException("threads " + threads + ": expected at least 1");
        long size = device.size();
        Accumulator sum = hash.accumulator(size);
        int request = Math.max(hash.blockSize(), Math.min(REQUEST_SIZE, device.maximumBlockSize())
                / hash.blockSize() * hash.blockSize());
        BlockingQueue<long[]> work = new ArrayBlockingQueue<>(threads * 2);
        AtomicReference<IOException> failure = new AtomicReference<>();
        Thread[] readers = new Thread[threads];
        for (int i = 0; i < threads; i++) {
            readers[i] = new Thread(() -> read(device, sum, work, request, failure), "pagewise-checksum-" + i);
            readers[i].setDaemon(true);
            readers[i].start();
        }
        try {
            long at = 0;
            while (at < size && failure.get() == null) {
                List<Extent> extents = device.extents(at, Math.min(size - at, 1L << 30), MAX_EXTENTS);
                long mapped = at;
                for (Extent e : extents) {
                    long start = Math.max(at, e.offset());
                    long end = Math.min(size, e.end());
                    if (end <= at) continue;
                    // A gap in the map is read as data: only a cost, never a wrong byte.
                    if (start > at) queueReads(work, at, start, request);
                    if (e.hole()) {
                        sum.zero(start, end - start);
                    } else {
                        queueReads(work, start, end, request);
                    }
                    at = end;
                }
                if (at == mapped) throw new IOException(device.name() + " described nothing at offset " + at);
            }
        } catch (IOException e) {
            failure.compareAndSet(null, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            failure.compareAndSet(null, new InterruptedIOException("checksum of " + device.name() + " interrupted"));
        } finally {
            for (int i = 0; i < threads; i++) Uninterruptibly.run(() -> work.put(END));
            for (Thread reader : readers) Uninterruptibly.run(reader::join);
        }
        if (failure.get() != null) throw failure.get();
        return sum.finish();
    }

    /** Queues [from, to) as reads of up to request bytes, ending on multiples of request so that they stay aligned. */
    private static void queueReads(BlockingQueue<long[]> work, long from, long to, int request)
            throws InterruptedException {
        for (long at = from; at < to; ) {
            long end = Math.min(to, (at / request + 1) * request);
            work.put(new long[] {at, end - at});
            at = end;
        }
    }

    private static void read(BlockDevice device, Accumulator sum, BlockingQueue<long[]> work, int request,
                             AtomicReference<IOException> failure) {
        ByteBuffer buffer = BufferPool.aligned(request);
        while (true) {
            long[] range;
            try {
                range = work.take();
            } catch (InterruptedException e) {
                failure.compareAndSet(null, new InterruptedIOException("checksum reader interrupted"));
                return;
            }
            if (range == END) return;
            if (failure.get() != null) continue;
            try {
                buffer.clear().limit((int) range[1]);
                device.readFully(buffer, range[0]);
                sum.data(range[0], buffer.flip());
            } catch (IOException | RuntimeException e) {
                failure.compareAndSet(null, new IOException("reading " + device.name() + " at offset " + range[0]
                        + " (+" + range[1] + ") failed: " + e.getMessage(), e));
            }
        }
    }

}

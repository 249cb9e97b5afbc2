package io.pagewise.copy;

import io.pagewise.Extent;
import io.pagewise.device.BlockDevice;
import io.pagewise.device.Capabilities;
import io.pagewise.device.Capability;
import io.pagewise.device.ChangeTracker;
import io.pagewise.device.ZeroFlag;
import io.pagewise.internal.BufferPool;
import io.pagewise.internal.Buffers;
import io.pagewise.internal.Uninterruptibly;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Copies one {@link BlockDevice} to another with many requests in flight, without reading the source's holes and
 * without writing zeros as data.
 *
 * <pre>{@code
 * try (BlockDevice src = FileDevice.open(Path.of("disk.img"), CacheMode.EVICT);
 *      BlockDevice dst = NbdDevice.connect("nbd+unix:///?socket=/tmp/nbd.sock", 4)) {
 *     CopyResult r = new Copier(new CopyOptions().requests(32).flush(true)
 *             .progress((done, total) -> System.err.print("\r" + done * 100 / total + "%"))).copy(src, dst);
 * }
 * }</pre>
 *
 * One thread walks the source's allocation map and queues work; {@code requests} worker threads each read one
 * data range and write it (splitting out all-zero blocks), or zero one hole range. The first failure stops the
 * copy; {@link #cancel()} stops it from another thread. A Copier runs one copy.
 *
 * <p>The copier logs to the {@link System.Logger} named {@value #LOGGER_NAME},
 * all at {@code DEBUG}: how a copy will run (request size and alignment, what happens to zero ranges), how it ended,
 * failures after the first (the first is thrown), and what each device offers (its block sizes and whether it
 * zeroes, maps holes and starts zeroed). Failures are reported by throwing, not logged above DEBUG.
 */
public final class Copier {
    /** The name of the {@link System.Logger} the copier logs to. */
    public static final String LOGGER_NAME = "io.pagewise.copy";
    static final System.Logger LOG = System.getLogger(LOGGER_NAME);

    /** Zero ranges are handed to the workers in pieces no longer than this, so that several zero at once. */
    private static final long MAX_ZERO_REQUEST = 1L << 30;
    /** Runs asked of the source's map at once: enough to keep the queue fed, few enough to bound the list. */
    private static final int MAX_EXTENTS = 4096;
    /**
     * The most of the source's map asked for at once; a device answers less when it must (an NBD server with compact
     * headers 1 GiB), and with 64-bit lengths a sparse image's map is a few requests instead of one per GiB.
     */
    private static final long MAP_WINDOW = 1L << 50;
    private static final Work END = new Work(-1, 0, false, false);

    private final CopyOptions options;
    private final AtomicLong done = new AtomicLong();
    private final AtomicLong dataBytes = new AtomicLong();
    private final AtomicLong zeroedBytes = new AtomicLong();
    private final AtomicLong skippedBytes = new AtomicLong();
    private final AtomicReference<IOException> failure = new AtomicReference<>();
    /** Held while the progress listener runs: one call at a time, each with more done than the last. */
    private final Object progressLock = new Object();
    /** The done the listener was last told; guarded by progressLock. */
    private long reported = -1;
    private volatile boolean cancelled;
    /** Set by the first copy(): the counts and the checksum are one copy's, so a Copier runs one. */
    private final java.util.concurrent.atomic.AtomicBoolean used = new java.util.concurrent.atomic.AtomicBoolean();
    private long total;
    /**
     * Where the copy's last piece starts when it ends inside a block of a destination that takes whole blocks only and
     * goes on past the copy's end (-1 otherwise): that block is read back, overlaid and written whole.
     */
    private long tailStart = -1;
    /** Where that piece is written up to: the end of the destination block it ends inside, or of the destination. */
    private long tailEnd = -1;
    /**
     * What every request's offset is a multiple of (both devices' minimum block sizes): data grows and holes shrink to
     * whole blocks, so that a device that takes whole blocks only takes every request.
     */
    private int alignment = 1;
    /** The checksum being computed, when the options ask for one. */
    private Accumulator sum;
    private volatile byte[] checksum;

    /** A range to copy, or to zero; tail: the copy's last piece, written to the end of its block ({@link #tailStart}). */
    private record Work(long offset, long length, boolean zero, boolean tail) {}

    /**
     * A copier for one copy.
     *
     * @param options how to copy
     */
    public Copier(CopyOptions options) {
        this.options = options;
    }

    /** Stops a running copy: copy() then throws {@link CopyCancelledException}. */
    public void cancel() {
        cancelled = true;
    }

    /**
     * {@return the blkhash checksum of the source as copied} ({@link CopyOptions#checksum(BlockHash)}): the checksum
     * of what the destination holds from offset 0 to the source's size; null before a copy has finished, or when the
     * options asked for none
     */
    public byte[] checksum() {
        byte[] result = checksum;
        return result == null ? null : result.clone();
    }

    /** {@return the bytes finished so far (written, zeroed or skipped)} */
    public long bytesDone() { return done.get(); }

    /**
     * Copies all of source to the start of destination and returns when it is done. Neither device is closed.
     *
     * @param source      what to copy
     * @param destination where to copy it; at least as large as source
     * @return what the copy did
     * @throws CopyException when a read, write or zeroing fails, naming the side and the offset, or when the
     *         destination is too small
     * @throws CopyCancelledException after {@link #cancel()}
     * @throws IOException when a device's size cannot be read
     * @throws IllegalStateException when this Copier has run a copy already
     */
    public CopyResult copy(BlockDevice source, BlockDevice destination) throws IOException {
        return copy(source, destination, null);
    }

    /**
     * Copies only what changed: the ranges changes reports changed (all of source when changes is null) to the same
     * offsets of destination, which holds an earlier copy of source; an incremental backup. Unchanged ranges are
     * neither read nor written, but count as done; the result's data, zeroed and skipped bytes cover the changed
     * ranges only.
     *
     * @param source      what to copy
     * @param destination where to copy it; at least as large as source
     * @param changes     what changed in source since destination was copied from it, or null for everything
     * @return what the copy did
     * @throws CopyException when a read, write, zeroing or the change record fails, naming the side and the offset,
     *         or when the destination is too small
     * @throws CopyCancelledException after {@link #cancel()}
     * @throws IOException when a device's size cannot be read
     * @throws IllegalArgumentException when changes is given and the options ask for a checksum, which covers a whole
     *         copy
     * @throws IllegalStateException when this Copier has run a copy already
     */
    public CopyResult copy(BlockDevice source, BlockDevice destination, ChangeTracker changes) throws IOException {
        if (changes != null && options.checksum() != null) {
            throw new IllegalArgumentException("a checksum covers a whole copy, and a copy of the changes alone reads"
                    + " only them: compute it of the destination afterwards (Checksums.of)");
        }
        if (!used.compareAndSet(false, true)) {
            throw new IllegalStateException("this Copier has run a copy already: make a new one for each copy");
        }
        long started = System.nanoTime();
        total = source.size();
        long room = destination.size();
        if (room < total) {
            throw new CopyException("destination " + destination.name() + " (" + room + " bytes) is smaller than source "
                    + source.name() + " (" + total + " bytes)", -1, null);
        }
        if (!destination.capabilities().has(Capability.WRITE)) {
            throw new CopyException("destination " + destination.name() + " is read-only", -1, null);
        }
        describe("source", source);
        describe("destination", destination);
        sum = options.checksum() == null ? null : options.checksum().accumulator(total);
        int block = lcm(source.minimumBlockSize(), destination.minimumBlockSize());
        int requestSize = requestSize(source, destination);
        alignment = block;
        tailEnd = tailEnd(destination, total);
        tailStart = tailEnd < 0 ? -1 : total / block * block;
        long end = tailStart >= 0 ? tailStart : total;
        // allocated() promises every byte allocated, so zero ranges are written even where they already read as zeros.
        boolean skipZeros = !options.allocated()
                && (options.destinationIsZero() || destination.capabilities().has(Capability.STARTS_ZEROED));
        if (LOG.isLoggable(Level.DEBUG)) {
            LOG.log(Level.DEBUG, String.format(Locale.ROOT, "copying %s (%d bytes) to %s: %d requests of up to %d bytes,"
                    + " aligned to %d, zero ranges %s", source.name(), total, destination.name(), options.requests(),
                    requestSize, block, skipZeros ? "skipped" : options.allocated() ? "allocated" : "zeroed"));
        }

        BlockingQueue<Work> queue = new ArrayBlockingQueue<>(options.requests() * 2);
        List<Thread> workers = new ArrayList<>();
        for (int i = 0; i < options.requests(); i++) {
            Worker worker = new Worker(source, destination, queue, requestSize, skipZeros);
            Thread thread = new Thread(worker, "pagewise-copy-" + i);
            thread.setDaemon(true);
            thread.start();
            workers.add(thread);
        }
        try {
            if (changes == null) {
                queueWork(source, queue, requestSize, 0, end);
            } else {
                queueChanged(source, changes, queue, requestSize, end);
            }
            // Always copied, even in an incremental copy: one block, and no bitmap has to be asked about it.
            if (tailStart >= 0 && !stopped()) queue.put(new Work(tailStart, total - tailStart, false, true));
        } catch (IOException e) {
            fail(e instanceof CopyException ? (CopyException) e
                    : new CopyException("cannot map " + source.name() + ": " + e.getMessage(), -1, e));
        } catch (InterruptedException e) {
            cancelled = true;
            Thread.currentThread().interrupt();
        } finally {
            for (int i = 0; i < workers.size(); i++) Uninterruptibly.run(() -> queue.put(END));
            for (Thread t : workers) Uninterruptibly.run(t::join);
        }
        IOException failed = failure.get();
        if (failed == null && cancelled) failed = new CopyCancelledException(done.get(), total);
        if (failed == null && options.flush()) {
            try {
                destination.flush();
            } catch (IOException e) {
                failed = new CopyException("flushing " + destination.name() + " failed: " + e.getMessage(), -1, e);
            }
        }
        if (failed != null) {
            LOG.log(Level.DEBUG, "copy of " + source.name() + " to " + destination.name() + " stopped after " + done.get()
                    + " of " + total + " bytes: " + failed.getMessage());
            throw failed;
        }
        if (sum != null) checksum = sum.finish();
        synchronized (progressLock) {
            options.progress().progress(total, total);
        }
        CopyResult result = new CopyResult(total, dataBytes.get(), zeroedBytes.get(), skippedBytes.get(),
                System.nanoTime() - started);
        if (LOG.isLoggable(Level.DEBUG)) {
            LOG.log(Level.DEBUG, String.format(Locale.ROOT, "copied %s to %s: %d bytes in %.3f s, %d written, %d zeroed,"
                    + " %d already zero", source.name(), destination.name(), total, result.nanos() / 1e9,
                    result.dataBytes(), result.zeroedBytes(), result.skippedBytes()));
        }
        return result;
    }

    /**
     * The size of the read and write requests a copy between these devices uses: the options' size, capped by both
     * devices' maximum block size and aligned to both minimums.
     *
     * @param source      what would be copied
     * @param destination where it would go
     * @return the request size in bytes
     */
    public int requestSize(BlockDevice source, BlockDevice destination) {
        int block = lcm(source.minimumBlockSize(), destination.minimumBlockSize());
        int size = Math.min(options.requestSize(), Math.min(source.maximumBlockSize(), destination.maximumBlockSize()));
        return Math.max(block, size / block * block);
    }

    /**
     * Queues the changed runs of the source up to until, each as its data and holes; unchanged runs are only counted
     * as done.
     */
    private void queueChanged(BlockDevice source, ChangeTracker changes, BlockingQueue<Work> queue, int requestSize,
            long until) throws IOException, InterruptedException {
        long position = 0;
        while (position < until && !stopped()) {
            List<Extent> runs;
            try {
                runs = changes.changedRuns(position, Math.min(until - position, MAP_WINDOW), MAX_EXTENTS);
            } catch (IOException e) {
                throw new CopyException("reading the dirty bitmap " + changes.bitmapName() + " of " + source.name()
                        + " at offset " + position + " failed: " + e.getMessage(), position, e);
            }
            long mapped = position;
            long described = position;
            // position stays on a multiple of the alignment (or at until): a record finer than the destination's
            // block copies the whole blocks its changes touch, and skips only whole unchanged blocks.
            for (Extent run : runs) {
                long start = Math.max(position, run.offset());
                long end = Math.min(until, run.end());
                if (end <= position) continue;
                described = end;
                // A gap in the record is copied: it is only ever a cost, never a missed change.
                if (start > position) position = queueAligned(source, queue, requestSize, position, start, until);
                if (run.hole()) {
                    long skipEnd = alignDown(end, until);
                    if (skipEnd > position) {
                        finished(skipEnd - position);
                        position = skipEnd;
                    }
                } else if (end > position) {
                    position = queueAligned(source, queue, requestSize, position, end, until);
                }
                if (stopped()) break;
            }
            // Only an unchanged run smaller than a block was described: copied with what follows it.
            if (position == mapped && described > position && !stopped()) {
                position = queueAligned(source, queue, requestSize, position, described, until);
            }
            if (position == mapped && !stopped()) {
                throw new CopyException("the dirty bitmap " + changes.bitmapName() + " of " + source.name()
                        + " described nothing at offset " + position, position, null);
            }
        }
    }

    /** Queues [from, to rounded up to the alignment, at most until) as queueWork does; returns where it ended. */
    private long queueAligned(BlockDevice source, BlockingQueue<Work> queue, int requestSize, long from, long to,
            long until) throws IOException, InterruptedException {
        long end = alignUp(to, until);
        queueWork(source, queue, requestSize, from, end);
        return end;
    }

    /** Queues [from, to) of the source as its allocation map describes it: data to copy, holes to zero. */
    private void queueWork(BlockDevice source, BlockingQueue<Work> queue, int requestSize, long from, long to)
            throws IOException, InterruptedException {
        long position = from;
        while (position < to && !stopped()) {
            long mapped = position;
            List<Extent> extents;
            try {
                extents = source.extents(position, Math.min(to - position, MAP_WINDOW), MAX_EXTENTS);
            } catch (IOException e) {
                throw new CopyException("reading the allocation map of " + source.name() + " at offset " + position
                        + " failed: " + e.getMessage(), position, e);
            }
            long described = position;
            for (Extent e : extents) {
                long start = Math.min(to, Math.max(position, e.offset()));
                long end = Math.min(to, e.end());
                if (end <= position) continue;
                described = end;
                // A gap in the map is copied as data: it is only ever a cost, never a wrong byte. So are the edges of
                // a hole that do not fill whole blocks, and data grows to the end of its last block.
                if (!e.hole()) {
                    position = queueRange(queue, position, alignUp(end, to), false, requestSize);
                } else {
                    long holeStart = alignUp(start, to);
                    long holeEnd = alignDown(end, to);
                    if (holeStart > position) position = queueRange(queue, position, holeStart, false, requestSize);
                    if (holeEnd > position) position = queueRange(queue, position, holeEnd, true, requestSize);
                }
                if (stopped()) break;
            }
            // Only a hole smaller than a block was described: copied as data with what follows it.
            if (position == mapped && described > position && !stopped()) {
                position = queueRange(queue, position, alignUp(described, to), false, requestSize);
            }
            if (position == mapped && !stopped()) {
                throw new CopyException(source.name() + " described nothing at offset " + position, position, null);
            }
        }
    }

    /** offset rounded down to a multiple of the alignment, unless it is limit (the end of what is queued). */
    private long alignDown(long offset, long limit) {
        return offset == limit ? limit : offset / alignment * alignment;
    }

    /** offset rounded up to a multiple of the alignment, at most limit. */
    private long alignUp(long offset, long limit) {
        return Math.min(limit, (offset + alignment - 1) / alignment * alignment);
    }

    private long queueRange(BlockingQueue<Work> queue, long position, long end, boolean hole, int requestSize)
            throws InterruptedException {
        long pieceLimit = hole ? MAX_ZERO_REQUEST : requestSize;
        while (position < end && !stopped()) {
            // Pieces end on multiples of their size so that data requests stay aligned after a hole.
            long next = Math.min(end, (position / pieceLimit + 1) * pieceLimit);
            queue.put(new Work(position, next - position, hole, false));
            position = next;
        }
        return position;
    }

    private boolean stopped() {
        return cancelled || failure.get() != null;
    }

    /** Records the first failure, which copy() throws; later ones are only logged. */
    private void fail(IOException e) {
        if (!failure.compareAndSet(null, e)) LOG.log(Level.DEBUG, "after the first failure, also: " + e.getMessage());
    }

    /**
     * Counts finished bytes and tells the listener. Workers finish out of order, and one that counted first may call
     * later: done is read again under the lock, so the listener only ever sees it grow.
     */
    private void finished(long bytes) {
        done.addAndGet(bytes);
        if (options.progress() == CopyProgress.NONE) return;
        synchronized (progressLock) {
            long now = done.get();
            if (now <= reported || now >= total) return;
            reported = now;
            options.progress().progress(now, total);
        }
    }

    private final class Worker implements Runnable {
        private final BlockDevice source;
        private final BlockDevice destination;
        private final Set<ZeroFlag> zeroFlags;
        /** Zeros to write as data, made on first need. */
        private ByteBuffer zeros;
        private final BlockingQueue<Work> queue;
        private final ByteBuffer buffer;
        private final boolean skipZeros;
        private final int sparseBlock;

        Worker(BlockDevice source, BlockDevice destination, BlockingQueue<Work> queue, int requestSize, boolean skipZeros) {
            this.source = source;
            this.destination = destination;
            this.queue = queue;
            this.buffer = BufferPool.aligned(requestSize);
            this.skipZeros = skipZeros;
            // Zero runs are found in whole blocks of both devices, so that they are zeroed in whole blocks.
            this.sparseBlock = options.sparseBlock() == 0 ? 0 : lcm(options.sparseBlock(), alignment);
            this.zeroFlags = options.allocated() ? ZeroFlag.NONE : ZeroFlag.TRIM;
        }

        @Override
        public void run() {
            while (true) {
                Work work;
                try {
                    work = queue.take();
                } catch (InterruptedException e) {
                    cancelled = true;
                    return;
                }
                if (work == END) return;
                if (stopped()) continue;
                try {
                    if (work.tail) {
                        copyTail(work.offset, (int) work.length);
                    } else if (work.zero) {
                        if (sum != null) sum.zero(work.offset, work.length);
                        zero(work.offset, work.length);
                    } else {
                        copy(work.offset, (int) work.length);
                    }
                    finished(work.length);
                } catch (CopyException e) {
                    fail(e);
                } catch (IOException | RuntimeException e) {
                    fail(new CopyException("copy failed at offset " + work.offset + ": " + e.getMessage(), work.offset, e));
                }
            }
        }

        private void copy(long offset, int length) throws IOException {
            readSource(offset, length);
            if (sparseBlock == 0) {
                write(offset, 0, length);
                return;
            }
            // Runs of whole all-zero blocks (aligned on the device) become zeroing; the rest is written as is.
            int runStart = 0;
            boolean runIsZero = false;
            int at = 0;
            while (at < length) {
                int blockEnd = (int) Math.min(length, (offset + at) / sparseBlock * sparseBlock + sparseBlock - offset);
                boolean zero = blockEnd - at == sparseBlock && Buffers.isZero(buffer, at, blockEnd);
                if (at > runStart && zero != runIsZero) {
                    flushRun(offset, runStart, at, runIsZero);
                    runStart = at;
                }
                runIsZero = zero;
                at = blockEnd;
            }
            flushRun(offset, runStart, length, runIsZero);
        }

        /**
         * The copy's last piece, which ends inside a destination block that goes on past it: that block is read from
         * the destination, the source's bytes are put over its start and the piece is written to the block's end, so
         * that a device taking whole blocks only (an NBD server with a minimum block size) takes it, and the rest of
         * the block stays as it was.
         */
        private void copyTail(long offset, int length) throws IOException {
            long lastBlock = (offset + length) / destination.minimumBlockSize() * destination.minimumBlockSize();
            int keptAt = (int) (lastBlock - offset);
            int through = (int) (tailEnd - offset);
            buffer.clear().position(keptAt).limit(through);
            try {
                destination.readFully(buffer, lastBlock);
            } catch (IOException e) {
                throw new CopyException("reading " + destination.name() + " at offset " + lastBlock + " (+"
                        + (through - keptAt) + "), the block the copy ends inside, failed: " + e.getMessage(), lastBlock, e);
            }
            readSource(offset, length);
            writeOut(buffer.duplicate().clear().limit(through), offset);
            dataBytes.addAndGet(length);
        }

        /** Reads [offset, offset + length) of the source into the buffer's start and adds it to the checksum. */
        private void readSource(long offset, int length) throws IOException {
            buffer.clear().limit(length);
            try {
                source.readFully(buffer, offset);
                if (buffer.hasRemaining()) {
                    throw new IOException(source.name() + " read " + buffer.position() + " bytes and left its buffer's "
                            + "position there (BlockDevice.readFully must fill the buffer and move its position)");
                }
            } catch (IOException e) {
                throw new CopyException("reading " + source.name() + " at offset " + offset + " (+" + length
                        + ") failed: " + e.getMessage(), offset, e);
            }
            if (sum != null) sum.data(offset, buffer.duplicate().flip());
        }

        private void flushRun(long offset, int from, int to, boolean zero) throws IOException {
            if (to <= from) return;
            if (zero) {
                zero(offset + from, to - from);
            } else {
                write(offset, from, to);
            }
        }

        /** Zeroes through the device, or writes zeros as data where it cannot zero. */
        private void zeroOrWrite(long offset, long length) throws IOException {
            if (destination.capabilities().has(Capability.ZERO)) {
                destination.zero(offset, length, zeroFlags);
                return;
            }
            if (zeros == null) zeros = BufferPool.aligned(buffer.capacity());
            for (long at = offset, end = offset + length; at < end; ) {
                int n = (int) Math.min(zeros.capacity(), end - at);
                ByteBuffer slice = zeros.duplicate().limit(n);
                destination.write(slice, at, false);
                at += n;
            }
        }

        private void write(long offset, int from, int to) throws IOException {
            ByteBuffer slice = buffer.duplicate();
            slice.limit(to).position(from);
            writeOut(slice, offset + from);
            dataBytes.addAndGet(to - from);
        }

        private void writeOut(ByteBuffer slice, long at) throws IOException {
            int length = slice.remaining();
            try {
                destination.write(slice, at, false);
                if (slice.hasRemaining()) {
                    throw new IOException(destination.name() + " left " + slice.remaining() + " bytes of the buffer "
                            + "behind its position (BlockDevice.write must write all and move the position)");
                }
            } catch (IOException e) {
                throw new CopyException("writing " + destination.name() + " at offset " + at + " (+" + length
                        + ") failed: " + e.getMessage(), at, e);
            }
        }

        private void zero(long offset, long length) throws IOException {
            if (skipZeros) {
                skippedBytes.addAndGet(length);
                return;
            }
            try {
                zeroOrWrite(offset, length);
            } catch (IOException e) {
                throw new CopyException("zeroing " + destination.name() + " at offset " + offset + " (+" + length
                        + ") failed: " + e.getMessage(), offset, e);
            }
            zeroedBytes.addAndGet(length);
        }
    }

    /** What the copy can rely on from a device, at DEBUG: its description, size and limits, and what it lacks. */
    private static void describe(String role, BlockDevice device) throws IOException {
        if (!LOG.isLoggable(Level.DEBUG)) return;
        boolean source = role.equals("source");
        Capabilities can = device.capabilities();
        LOG.log(Level.DEBUG, role + " " + device + ": " + device.size() + " bytes, requests of "
                + device.minimumBlockSize() + " to " + device.maximumBlockSize() + " bytes"
                + (source && !can.has(Capability.EXTENTS) ? ", no map of holes: everything is read as data" : "")
                + (!source && !can.has(Capability.ZERO) ? ", cannot zero: zeros are written as data" : "")
                + (!source && can.has(Capability.STARTS_ZEROED) ? ", reads as zeros already" : ""));
    }

    /**
     * How far the copy's last piece must be written when it ends inside a block of a destination that takes nothing
     * smaller than a block: to that block's end, or to the destination's own end where its last block is short.
     * -1 when the copy ends where a block or the destination does.
     */
    private static long tailEnd(BlockDevice destination, long end) throws IOException {
        int block = destination.minimumBlockSize();
        long lastBlock = end / block * block;
        long through = Math.min(lastBlock + block, destination.size());
        return block <= 1 || lastBlock == end || through <= end ? -1 : through;
    }

    private static int lcm(int a, int b) {
        int x = a, y = b;
        while (y != 0) {
            int t = x % y;
            x = y;
            y = t;
        }
        return a / x * b;
    }

    /** Thrown by {@link Copier#copy} after {@link Copier#cancel()}. */
    public static final class CopyCancelledException extends InterruptedIOException {
        /**
         * A cancelled copy, with a message saying how far it had come.
         *
         * @param done  bytes finished when it stopped
         * @param total the bytes of the whole copy
         */
        public CopyCancelledException(long done, long total) {
            super("copy cancelled after " + done + " of " + total + " bytes");
        }

        /**
         * A cancelled copy of a stream, whose length is not known.
         *
         * @param done bytes finished when it stopped
         */
        public CopyCancelledException(long done) {
            super("copy cancelled after " + done + " bytes");
        }
    }
}

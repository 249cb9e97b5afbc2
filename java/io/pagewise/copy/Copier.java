package io.pagewise.copy;

import io.pagewise.device.BlockDevice;
import io.pagewise.device.Capabilities;
import io.pagewise.device.Capability;
import io.pagewise.device.ChangeTracker;
import io.pagewise.internal.Uninterruptibly;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;

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

    private final CopyOptions options;
    private final SharedCopyState run;
    /** Set by the first copy(): the counts and the checksum are one copy's, so a Copier runs one. */
    private final java.util.concurrent.atomic.AtomicBoolean used = new java.util.concurrent.atomic.AtomicBoolean();
    private volatile byte[] checksum;

    /**
     * A copier for one copy.
     *
     * @param options how to copy
     */
    public Copier(CopyOptions options) {
        this.options = options;
        this.run = new SharedCopyState(options);
    }

    /** Stops a running copy: copy() then throws {@link CopyCancelledException}. */
    public void cancel() {
        run.cancel();
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
    public long bytesDone() { return run.done(); }

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
        long total = source.size();
        long room = destination.size();
        if (room < total) {
            throw new CopyException("destination " + destination.name() + " (" + room + " bytes) is smaller than source "
                    + source.name() + " (" + total + " bytes)", -1, null);
        }
        if (!destination.capabilities().has(Capability.WRITE)) {
            throw new CopyException("destination " + destination.name() + " is read-only", -1, null);
        }
        run.start(total);
        describe("source", source);
        describe("destination", destination);
        Accumulator sum = options.checksum() == null ? null : options.checksum().accumulator(total);
        int block = lcm(source.minimumBlockSize(), destination.minimumBlockSize());
        int requestSize = requestSize(source, destination);
        long tailEnd = tailEnd(destination, total);
        long tailStart = tailEnd < 0 ? -1 : total / block * block;
        long end = tailStart >= 0 ? tailStart : total;
        // allocated() promises every byte allocated, so zero ranges are written even where they already read as zeros.
        boolean skipZeros = !options.allocated()
                && (options.destinationIsZero() || destination.capabilities().has(Capability.STARTS_ZEROED));
        if (LOG.isLoggable(Level.DEBUG)) {
            LOG.log(Level.DEBUG, String.format(Locale.ROOT, "copying %s (%d bytes) to %s: %d requests of up to %d bytes,"
                    + " aligned to %d, zero ranges %s", source.name(), total, destination.name(), options.requests(),
                    requestSize, block, skipZeros ? "skipped" : options.allocated() ? "allocated" : "zeroed"));
        }
        CopySetup setup = new CopySetup(source, destination, requestSize, block, tailStart, tailEnd, skipZeros, sum);

        BlockingQueue<CopyWork> queue = new ArrayBlockingQueue<>(options.requests() * 2);
        List<Thread> workers = new ArrayList<>();
        for (int i = 0; i < options.requests(); i++) {
            Thread thread = new Thread(new CopyWorker(setup, options, queue, run), "pagewise-copy-" + i);
            thread.setDaemon(true);
            thread.start();
            workers.add(thread);
        }
        try {
            WorkPlanner planner = new WorkPlanner(setup, queue, run);
            if (changes == null) {
                planner.queueWork(0, end);
            } else {
                planner.queueChanged(changes, end);
            }
            // Always copied, even in an incremental copy: one block, and no bitmap has to be asked about it.
            if (tailStart >= 0 && !run.stopped()) queue.put(new CopyWork(tailStart, total - tailStart, false, true));
        } catch (IOException e) {
            run.fail(e instanceof CopyException ? (CopyException) e
                    : new CopyException("cannot map " + source.name() + ": " + e.getMessage(), -1, e));
        } catch (InterruptedException e) {
            run.cancel();
            Thread.currentThread().interrupt();
        } finally {
            for (int i = 0; i < workers.size(); i++) Uninterruptibly.run(() -> queue.put(CopyWork.END));
            for (Thread t : workers) Uninterruptibly.run(t::join);
        }
        IOException failed = run.failure();
        if (failed == null && run.cancelled()) failed = new CopyCancelledException(run.done(), total);
        if (failed == null && options.flush()) {
            try {
                destination.flush();
            } catch (IOException e) {
                failed = new CopyException("flushing " + destination.name() + " failed: " + e.getMessage(), -1, e);
            }
        }
        if (failed != null) {
            LOG.log(Level.DEBUG, "copy of " + source.name() + " to " + destination.name() + " stopped after "
                    + run.done() + " of " + total + " bytes: " + failed.getMessage());
            throw failed;
        }
        if (sum != null) checksum = sum.finish();
        run.finishedAll();
        CopyResult result = new CopyResult(total, run.dataBytes.get(), run.zeroedBytes.get(), run.skippedBytes.get(),
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

    static int lcm(int a, int b) {
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

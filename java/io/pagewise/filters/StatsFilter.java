package io.pagewise.filters;

import io.pagewise.Extent;
import io.pagewise.device.BlockDevice;
import io.pagewise.device.FilterDevice;
import io.pagewise.device.ZeroFlag;
import io.pagewise.filters.FaultFilter.Operation;
import io.pagewise.internal.FileErrors;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * Counts the calls of each operation, the bytes they cover, their failures and their latency (the time the device
 * underneath took), as nbdkit's stats filter. {@link #snapshot()} gives the counts at any time; {@link #report()}
 * writes them, one line per operation that was called:
 *
 * <pre>
 * elapsed 12.500 s
 * read: calls=2048 bytes=134217728 errors=0 mean=0.412ms max=9.101ms rate=10.24MiB/s
 * </pre>
 *
 * <p>The report is written when the filter closes, to a file (replaced, or appended to) or to standard error, and,
 * with an interval, also every interval while it is open. Bytes are the length of each call's range (0 for flush);
 * the rate is bytes over the elapsed time since the filter was made.
 */
public final class StatsFilter extends FilterDevice {
    /**
     * What one operation has done so far.
     *
     * @param calls        the calls made, failed or not
     * @param bytes        the bytes their ranges covered
     * @param errors       the calls that failed
     * @param totalLatency the time all calls took together
     * @param maxLatency   the time the longest call took
     */
    public record Counts(long calls, long bytes, long errors, Duration totalLatency, Duration maxLatency) {
        /** {@return the mean latency}, zero before the first call */
        public Duration meanLatency() {
            return calls == 0 ? Duration.ZERO : totalLatency.dividedBy(calls);
        }
    }

    /** The counters of one operation, shared by the per-connection views. */
    private static final class Counter {
        final LongAdder calls = new LongAdder();
        final LongAdder bytes = new LongAdder();
        final LongAdder errors = new LongAdder();
        final LongAdder nanos = new LongAdder();
        final AtomicLong maxNanos = new AtomicLong();
    }

    private final Map<Operation, Counter> counters;
    private final long started;
    private final Path file;
    private final boolean append;
    private final ScheduledExecutorService timer;

    /**
     * Counts over a device.
     *
     * @param device   the device to count the calls to
     * @param file     where {@link #report()} writes, or null for standard error
     * @param append   true to append each report to file, false to replace it
     * @param interval how often to write a report while open, or {@link Duration#ZERO} for only at close
     */
    public StatsFilter(BlockDevice device, Path file, boolean append, Duration interval) {
        super(device);
        this.counters = new EnumMap<>(Operation.class);
        for (Operation op : Operation.values()) counters.put(op, new Counter());
        this.started = System.nanoTime();
        this.file = file;
        this.append = append;
        if (interval.isNegative()) throw new IllegalArgumentException("filter stats: interval=" + interval + ": negative");
        if (interval.isZero()) {
            this.timer = null;
        } else {
            this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "pagewise-stats");
                t.setDaemon(true);
                return t;
            });
            long nanos = interval.toNanos();
            timer.scheduleAtFixedRate(this::reportQuietly, nanos, nanos, TimeUnit.NANOSECONDS);
        }
    }

    private StatsFilter(StatsFilter shared, BlockDevice view) {
        super(view);
        this.counters = shared.counters;
        this.started = shared.started;
        this.file = shared.file;
        this.append = shared.append;
        this.timer = null;
    }

    @Override
    protected BlockDevice over(BlockDevice view) { return new StatsFilter(this, view); }

    /** {@return the counts of every operation so far}, in the order of {@link Operation} */
    public Map<Operation, Counts> snapshot() {
        Map<Operation, Counts> out = new EnumMap<>(Operation.class);
        counters.forEach((op, c) -> out.put(op, new Counts(c.calls.sum(), c.bytes.sum(), c.errors.sum(),
                Duration.ofNanos(c.nanos.sum()), Duration.ofNanos(c.maxNanos.get()))));
        return Collections.unmodifiableMap(out);
    }

    /** {@return the report as text}: the elapsed time, then a line for each operation that was called */
    public String format() {
        double elapsed = (System.nanoTime() - started) / 1e9;
        StringBuilder text = new StringBuilder(String.format(Locale.ROOT, "elapsed %.3f s%n", elapsed));
        snapshot().forEach((op, c) -> {
            if (c.calls() == 0) return;
            text.append(String.format(Locale.ROOT, "%s: calls=%d bytes=%d errors=%d mean=%.3fms max=%.3fms"
                            + " rate=%.2fMiB/s%n", Parameters.OPERATION_NAMES.get(op.ordinal()), c.calls(), c.bytes(),
                    c.errors(), c.meanLatency().toNanos() / 1e6, c.maxLatency().toNanos() / 1e6,
                    c.bytes() / elapsed / (1 << 20)));
        });
        return text.toString();
    }

    /**
     * Writes the report where the filter was told to: the file, or standard error.
     *
     * @throws IOException when the file cannot be written
     */
    public synchronized void report() throws IOException {
        String text = format();
        if (file == null) {
            PrintStream err = System.err;
            err.print(text);
            err.flush();
        } else {
            Files.writeString(file, text, StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                    append ? StandardOpenOption.APPEND : StandardOpenOption.TRUNCATE_EXISTING);
        }
    }

    private void reportQuietly() {
        try {
            report();
        } catch (IOException | RuntimeException e) {
            System.err.println("pagewise stats filter: cannot write " + file + ": " + FileErrors.reason(e));
        }
    }

    /**
     * Opens the report file as the first report will, creating or emptying it (appending leaves it as it is), so
     * that a path that cannot be written is refused when the filter is set up rather than found at close.
     *
     * @param file   where the reports go
     * @param append whether they are appended
     * @throws IOException naming the file and why it cannot be written
     */
    static void checkWritable(Path file, boolean append) throws IOException {
        try {
            Files.newOutputStream(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                    append ? StandardOpenOption.APPEND : StandardOpenOption.TRUNCATE_EXISTING).close();
        } catch (IOException e) {
            throw new IOException("filter stats: file=" + file + ": " + FileErrors.reason(e), e);
        }
    }

    /** One call's outcome into its counter. */
    private void count(Operation op, long bytes, long startNanos, boolean failed) {
        long nanos = System.nanoTime() - startNanos;
        Counter c = counters.get(op);
        c.calls.increment();
        c.bytes.add(bytes);
        c.nanos.add(nanos);
        if (failed) c.errors.increment();
        c.maxNanos.accumulateAndGet(nanos, Math::max);
    }

    /** A device call that the filter times. */
    private interface Call<T> {
        T run() throws IOException;
    }

    private <T> T timed(Operation op, long bytes, Call<T> call) throws IOException {
        long start = System.nanoTime();
        boolean failed = true;
        try {
            T result = call.run();
            failed = false;
            return result;
        } finally {
            count(op, bytes, start, failed);
        }
    }

    @Override
    public void readFully(ByteBuffer dst, long offset) throws IOException {
        timed(Operation.READ, dst.remaining(), () -> { device.readFully(dst, offset); return null; });
    }

    @Override
    public void readFully(ByteBuffer[] dsts, long offset) throws IOException {
        timed(Operation.READ, remaining(dsts), () -> { device.readFully(dsts, offset); return null; });
    }

    @Override
    public void write(ByteBuffer src, long offset, boolean fua) throws IOException {
        timed(Operation.WRITE, src.remaining(), () -> { device.write(src, offset, fua); return null; });
    }

    @Override
    public void write(ByteBuffer[] srcs, long offset, boolean fua) throws IOException {
        timed(Operation.WRITE, remaining(srcs), () -> { device.write(srcs, offset, fua); return null; });
    }

    @Override
    public void zero(long offset, long length, Set<ZeroFlag> flags) throws IOException {
        timed(Operation.ZERO, length, () -> { device.zero(offset, length, flags); return null; });
    }

    @Override
    public void trim(long offset, long length, boolean fua) throws IOException {
        timed(Operation.TRIM, length, () -> { device.trim(offset, length, fua); return null; });
    }

    @Override
    public void flush() throws IOException {
        timed(Operation.FLUSH, 0, () -> { device.flush(); return null; });
    }

    @Override
    public List<Extent> extents(long offset, long length, int maxExtents) throws IOException {
        return timed(Operation.BLOCK_STATUS, length, () -> device.extents(offset, length, maxExtents));
    }

    @Override
    public void cache(long offset, long length) throws IOException {
        timed(Operation.CACHE, length, () -> { device.cache(offset, length); return null; });
    }

    /** Stops the periodic report, writes the last one, then closes the device. */
    @Override
    public void close() throws IOException {
        try {
            if (timer != null) timer.shutdownNow();
            // A report that cannot be written is said on standard error; it is no failure of the device's close.
            reportQuietly();
        } finally {
            device.close();
        }
    }

    private static long remaining(ByteBuffer[] buffers) {
        long n = 0;
        for (ByteBuffer b : buffers) n += b.remaining();
        return n;
    }

    @Override
    public String toString() { return device + " (counted)"; }
}

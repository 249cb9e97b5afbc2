package io.pagewise.filters;

import io.pagewise.Extent;
import io.pagewise.device.BlockDevice;
import io.pagewise.device.FilterDevice;
import io.pagewise.device.ZeroFlag;
import io.pagewise.filters.FaultFilter.Operation;
import io.pagewise.internal.FileErrors;
import io.pagewise.internal.OperationCounter;
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

    /** The counters of each operation, shared by the per-connection views. */
    private final Map<Operation, OperationCounter> counters;
    /** The server's flush as it stops, counted apart from the flushes clients ask for. */
    private final OperationCounter shutdownFlush;
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
        for (Operation op : Operation.values()) counters.put(op, new OperationCounter());
        this.shutdownFlush = new OperationCounter();
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
        this.shutdownFlush = shared.shutdownFlush;
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
        counters.forEach((op, c) -> out.put(op, counts(c)));
        return Collections.unmodifiableMap(out);
    }

    /** {@return the counts of the server's flushes as it stopped}, which {@link #snapshot()}'s FLUSH leaves out */
    public Counts shutdownFlushes() {
        return counts(shutdownFlush);
    }

    private static Counts counts(OperationCounter c) {
        return new Counts(c.calls(), c.bytes(), c.errors(), Duration.ofNanos(c.totalNanos()), Duration.ofNanos(c.maxNanos()));
    }

    /**
     * {@return the report as text}: the elapsed time, then the lines of each operation that was called, the server's
     * flush as it stopped after flush as {@code flush at shutdown}; the same fields and format as the server's
     * {@code --stats} (io.pagewise.nbd.server.ServerStats#format)
     */
    public String format() {
        double elapsed = (System.nanoTime() - started) / 1e9;
        StringBuilder text = new StringBuilder(OperationCounter.elapsedLine(elapsed));
        counters.forEach((op, c) -> {
            c.appendTo(text, Parameters.OPERATION_NAMES.get(op.ordinal()), elapsed);
            if (op == Operation.FLUSH) shutdownFlush.appendTo(text, OperationCounter.SHUTDOWN_FLUSH, elapsed);
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

    /** A device call that the filter times. */
    private interface Call<T> {
        T run() throws IOException;
    }

    /** Times a call on the range [offset, offset + length) into op's counter. */
    private <T> T timed(Operation op, long offset, long length, Call<T> call) throws IOException {
        return timed(counters.get(op), offset, length, call);
    }

    /** Times a call into counter: on a range, or with offset -1 on none (a flush). */
    private static <T> T timed(OperationCounter counter, long offset, long length, Call<T> call) throws IOException {
        long start = System.nanoTime();
        boolean failed = true;
        try {
            T result = call.run();
            failed = false;
            return result;
        } finally {
            long nanos = System.nanoTime() - start;
            if (offset < 0) {
                counter.count(length, nanos, failed);
            } else {
                counter.count(offset, length, length, nanos, failed);
            }
        }
    }

    @Override
    public void readFully(ByteBuffer dst, long offset) throws IOException {
        timed(Operation.READ, offset, dst.remaining(), () -> { device.readFully(dst, offset); return null; });
    }

    @Override
    public void readFully(ByteBuffer[] dsts, long offset) throws IOException {
        timed(Operation.READ, offset, remaining(dsts), () -> { device.readFully(dsts, offset); return null; });
    }

    @Override
    public void write(ByteBuffer src, long offset, boolean fua) throws IOException {
        timed(Operation.WRITE, offset, src.remaining(), () -> { device.write(src, offset, fua); return null; });
    }

    @Override
    public void write(ByteBuffer[] srcs, long offset, boolean fua) throws IOException {
        timed(Operation.WRITE, offset, remaining(srcs), () -> { device.write(srcs, offset, fua); return null; });
    }

    @Override
    public void zero(long offset, long length, Set<ZeroFlag> flags) throws IOException {
        timed(Operation.ZERO, offset, length, () -> { device.zero(offset, length, flags); return null; });
    }

    @Override
    public void trim(long offset, long length, boolean fua) throws IOException {
        timed(Operation.TRIM, offset, length, () -> { device.trim(offset, length, fua); return null; });
    }

    @Override
    public void flush() throws IOException {
        timed(Operation.FLUSH, -1, 0, () -> { device.flush(); return null; });
    }

    @Override
    public List<Extent> extents(long offset, long length, int maxExtents) throws IOException {
        return timed(Operation.BLOCK_STATUS, offset, length, () -> device.extents(offset, length, maxExtents));
    }

    @Override
    public void cache(long offset, long length) throws IOException {
        timed(Operation.CACHE, offset, length, () -> { device.cache(offset, length); return null; });
    }

    @Override
    public void flushAtShutdown() throws IOException {
        timed(shutdownFlush, -1, 0, () -> { device.flushAtShutdown(); return null; });
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

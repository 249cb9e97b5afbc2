package io.pagewise.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;

/**
 * The counts of one kind of operation, and the one text both statistics reports print them in (the server's
 * {@code --stats} and the stats filter), so that the two always show the same fields in the same format. Each
 * operation is a line of calls, bytes, errors, mean and maximum latency and rate, then, for operations on a range,
 * a breakdown of their sizes and of their offsets' alignment, as nbdkit's stats filter gives:
 *
 * <pre>
 * elapsed 2.000 s
 * write: calls=12 bytes=3145728 errors=0 mean=0.150ms max=0.400ms rate=1.50MiB/s
 *   256 KiB..512 KiB: 12 calls (100.0%), 3.00 MiB; aligned to 256 KiB 100.0%, 512 KiB 50.0%, 1 MiB 25.0%
 * </pre>
 *
 * <p>A size class holds the lengths from a power of two up to the next one ("0 bytes" for empty ranges), most
 * called first; "aligned to N" is the share of its calls whose offset is a multiple of N, from the class's own size
 * up, until no call is aligned further. Thread-safe.
 */
public final class OperationCounter {
    /** The name of the flush a server makes of its exports as it stops, which no client asked for. */
    public static final String SHUTDOWN_FLUSH = "flush at shutdown";

    /** Size classes: a length's highest bit (0 to 63), and 64 for a length of 0. */
    private static final int CLASSES = 65;
    /** Alignments: an offset's trailing zero bits, 0 to 63, and 64 for offset 0. */
    private static final int ALIGNMENTS = 65;
    /** The most alignments shown after a class's own size. */
    private static final int ALIGNMENTS_SHOWN = 6;

    private final LongAdder calls = new LongAdder();
    private final LongAdder bytes = new LongAdder();
    private final LongAdder errors = new LongAdder();
    private final LongAdder nanos = new LongAdder();
    private final AtomicLong maxNanos = new AtomicLong();
    private final AtomicLongArray classCalls = new AtomicLongArray(CLASSES);
    private final AtomicLongArray classBytes = new AtomicLongArray(CLASSES);
    /** Calls per size class and exact alignment: [class * ALIGNMENTS + trailing zeros]. */
    private final AtomicLongArray classAlignment = new AtomicLongArray(CLASSES * ALIGNMENTS);

    /**
     * Counts a call on a range: into its size class and alignment too.
     *
     * @param offset where the range starts
     * @param length the range's length, which the size breakdown counts whatever the outcome
     * @param moved  the bytes to count as moved (the range's length, or 0 for a failure a report leaves out)
     * @param nanos  how long the call took
     * @param failed whether it failed
     */
    public void count(long offset, long length, long moved, long nanos, boolean failed) {
        count(moved, nanos, failed);
        int size = sizeClass(length);
        classCalls.incrementAndGet(size);
        classBytes.addAndGet(size, length);
        classAlignment.incrementAndGet(size * ALIGNMENTS + Long.numberOfTrailingZeros(offset));
    }

    /**
     * Counts a call without a range, such as a flush.
     *
     * @param moved  the bytes to count as moved
     * @param nanos  how long the call took
     * @param failed whether it failed
     */
    public void count(long moved, long nanos, boolean failed) {
        calls.increment();
        bytes.add(moved);
        this.nanos.add(nanos);
        if (failed) errors.increment();
        maxNanos.accumulateAndGet(nanos, Math::max);
    }

    /** {@return the calls counted, failed ones included} */
    public long calls() { return calls.sum(); }

    /** {@return the bytes counted as moved} */
    public long bytes() { return bytes.sum(); }

    /** {@return the calls that failed} */
    public long errors() { return errors.sum(); }

    /** {@return the time all calls took together, in nanoseconds} */
    public long totalNanos() { return nanos.sum(); }

    /** {@return the time the longest call took, in nanoseconds} */
    public long maxNanos() { return maxNanos.get(); }

    /** {@return the first line of a report}: the seconds the counting has gone on */
    public static String elapsedLine(double seconds) {
        return String.format(Locale.ROOT, "elapsed %.3f s%n", seconds);
    }

    /**
     * Appends this operation's lines, unless it was never called: its counts, then its size breakdown.
     *
     * @param text    where to append
     * @param name    the operation's name, such as {@code read} or {@code flush at shutdown}
     * @param seconds the elapsed time, for the rate
     */
    public void appendTo(StringBuilder text, String name, double seconds) {
        long n = calls();
        if (n == 0) return;
        long moved = bytes();
        text.append(String.format(Locale.ROOT, "%s: calls=%d bytes=%d errors=%d mean=%.3fms max=%.3fms rate=%.2fMiB/s%n",
                name, n, moved, errors(), totalNanos() / (double) n / 1e6, maxNanos() / 1e6,
                seconds > 0 ? moved / seconds / (1 << 20) : 0.0));
        for (String line : breakdown()) text.append("  ").append(line).append(System.lineSeparator());
    }

    /** The size classes called, most called first, each with its share, bytes and alignment. */
    private List<String> breakdown() {
        long total = 0;
        List<Integer> used = new ArrayList<>();
        for (int c = 0; c < CLASSES; c++) {
            long n = classCalls.get(c);
            if (n == 0) continue;
            total += n;
            used.add(c);
        }
        used.sort((a, b) -> Long.compare(classCalls.get(b), classCalls.get(a)));
        List<String> lines = new ArrayList<>();
        for (int c : used) {
            long n = classCalls.get(c);
            StringBuilder line = new StringBuilder(String.format(Locale.ROOT, "%s: %d calls (%.1f%%), %s",
                    c == 64 ? "0 bytes" : power(c) + ".." + power(c + 1), n, 100.0 * n / total, amount(classBytes.get(c), 2)));
            if (c < 64) {
                line.append("; aligned to");
                for (int k = c; k < ALIGNMENTS && k <= c + ALIGNMENTS_SHOWN; k++) {
                    long aligned = 0;
                    for (int z = k; z < ALIGNMENTS; z++) aligned += classAlignment.get(c * ALIGNMENTS + z);
                    if (aligned == 0 && k > c) break;
                    line.append(k > c ? ", " : " ").append(k == 64 ? "0 only" : power(k))
                            .append(String.format(Locale.ROOT, " %.1f%%", 100.0 * aligned / n));
                }
            }
            lines.add(line.toString());
        }
        return lines;
    }

    private static int sizeClass(long length) {
        return length == 0 ? 64 : 63 - Long.numberOfLeadingZeros(length);
    }

    /** A byte count in the largest binary unit it reaches, with that many decimals: 3.00 MiB with 2, 3.0 MiB with 1. */
    public static String amount(long n, int decimals) {
        String[] units = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
        double value = n;
        int unit = 0;
        while (value >= 1024 && unit < units.length - 1) {
            value /= 1024;
            unit++;
        }
        return unit == 0 ? n + " B" : String.format(Locale.ROOT, "%." + decimals + "f %s", value, units[unit]);
    }

    /** 2 to the power bit, in the largest binary unit that keeps it whole: 512 B, 4 KiB, 1 GiB. */
    static String power(int bit) {
        String[] units = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
        if (bit >= 64) return "16 EiB";
        int unit = Math.min(bit / 10, units.length - 1);
        return (1L << (bit - unit * 10)) + " " + units[unit];
    }
}

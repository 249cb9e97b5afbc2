package io.pagewise.jmh;

/** Request latencies in nanoseconds, as the harnesses report them. */
public final class Percentiles {
    private Percentiles() {}

    /** {@return the nearest-rank quantile (0.99 for p99) of sorted latencies, in milliseconds; NaN for none} */
    public static double millis(long[] sorted, double quantile) {
        if (sorted.length == 0) return Double.NaN;
        int index = (int) Math.ceil(quantile * sorted.length) - 1;
        return sorted[Math.max(0, Math.min(sorted.length - 1, index))] / 1e6;
    }
}

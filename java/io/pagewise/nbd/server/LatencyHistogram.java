package io.pagewise.nbd.server;

import java.util.concurrent.atomic.LongAdder;

/**
 * How long requests took, from being read to their reply being ready, in fixed buckets (100 µs to 10 s, then
 * everything longer), as Prometheus histograms count them. Lock-free; a snapshot read while requests finish may be
 * off by the requests finishing.
 */
public final class LatencyHistogram {
    /** The upper bounds of the buckets in seconds; a last bucket, unbounded, follows them. */
    private static final double[] BOUNDS = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
        0.25, 0.5, 1, 2.5, 5, 10};
    private static final long[] BOUND_NANOS = new long[BOUNDS.length];

    static {
        for (int i = 0; i < BOUNDS.length; i++) BOUND_NANOS[i] = Math.round(BOUNDS[i] * 1e9);
    }

    private final LongAdder[] buckets = new LongAdder[BOUNDS.length + 1];
    private final LongAdder sumNanos = new LongAdder();

    LatencyHistogram() {
        for (int i = 0; i < buckets.length; i++) buckets[i] = new LongAdder();
    }

    void record(long nanos) {
        int i = 0;
        while (i < BOUND_NANOS.length && nanos > BOUND_NANOS[i]) i++;
        buckets[i].increment();
        sumNanos.add(Math.max(0, nanos));
    }

    /** {@return the buckets' upper bounds in seconds, in increasing order, without the last, unbounded one} */
    public static double[] bounds() {
        return BOUNDS.clone();
    }

    /**
     * {@return the requests in each bucket, not cumulative: element i counts those that took more than bound i - 1
     * and at most bound i; the last element those over the last bound}
     */
    public long[] counts() {
        long[] counts = new long[buckets.length];
        for (int i = 0; i < counts.length; i++) counts[i] = buckets[i].sum();
        return counts;
    }

    /** {@return the requests recorded} */
    public long count() {
        long total = 0;
        for (LongAdder bucket : buckets) total += bucket.sum();
        return total;
    }

    /** {@return the time all recorded requests took together, in seconds} */
    public double sumSeconds() {
        return sumNanos.sum() / 1e9;
    }
}

package io.pagewise.filters;

import java.io.InterruptedIOException;
import java.util.concurrent.TimeUnit;

/**
 * A token bucket of bytes: it fills at a rate up to a capacity, starts full, and a caller takes what it moves. A
 * caller may take more than there is: the bucket goes into debt and the caller sleeps until the debt is paid, so
 * callers that come later wait behind it and the long-run rate holds for requests of any size.
 */
final class TokenBucket {
    private final long bytesPerSecond;
    private final double capacity;
    private double tokens;
    private long last = System.nanoTime();

    TokenBucket(long bytesPerSecond, double burstSeconds) {
        this.bytesPerSecond = bytesPerSecond;
        this.capacity = bytesPerSecond * burstSeconds;
        this.tokens = capacity;
    }

    /** {@return the bytes per second it fills at} */
    long bytesPerSecond() {
        return bytesPerSecond;
    }

    /** Takes n bytes' worth, sleeping as long as the bucket is in debt after that. */
    void take(long n) throws InterruptedIOException {
        long waitNanos;
        synchronized (this) {
            long now = System.nanoTime();
            tokens = Math.min(capacity, tokens + (now - last) * (double) bytesPerSecond / 1e9);
            last = now;
            tokens -= n;
            waitNanos = tokens >= 0 ? 0 : (long) (-tokens / bytesPerSecond * 1e9);
        }
        if (waitNanos == 0) return;
        try {
            TimeUnit.NANOSECONDS.sleep(waitNanos);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while waiting for the bandwidth limit");
        }
    }
}

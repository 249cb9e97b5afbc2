package io.pagewise.copy;

import java.io.IOException;
import java.lang.System.Logger.Level;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * What a {@link Copier}'s planner, its workers and its caller share while one copy runs: the bytes done and how they
 * were done, the first failure, whether it was cancelled, and the calls to the progress listener.
 */
final class SharedCopyState {
    final AtomicLong dataBytes = new AtomicLong();
    final AtomicLong zeroedBytes = new AtomicLong();
    final AtomicLong skippedBytes = new AtomicLong();
    /** Its progress() is the listener, asked for at each call. */
    private final CopyOptions options;
    private final AtomicLong done = new AtomicLong();
    private final AtomicReference<IOException> failure = new AtomicReference<>();
    /** Held while the progress listener runs: one call at a time, each with more done than the last. */
    private final Object progressLock = new Object();
    /** The done the listener was last told; guarded by progressLock. */
    private long reported = -1;
    private volatile boolean cancelled;
    /** The bytes of the whole copy; set before the copy's threads start. */
    private long total;

    SharedCopyState(CopyOptions options) {
        this.options = options;
    }

    void start(long total) {
        this.total = total;
    }

    long total() { return total; }

    long done() { return done.get(); }

    void cancel() {
        cancelled = true;
    }

    boolean cancelled() { return cancelled; }

    IOException failure() { return failure.get(); }

    boolean stopped() {
        return cancelled || failure.get() != null;
    }

    /** Records the first failure, which copy() throws; later ones are only logged. */
    void fail(IOException e) {
        if (!failure.compareAndSet(null, e)) {
            Copier.LOG.log(Level.DEBUG, "after the first failure, also: " + e.getMessage());
        }
    }

    /**
     * Counts finished bytes and tells the listener. Workers finish out of order, and one that counted first may call
     * later: done is read again under the lock, so the listener only ever sees it grow.
     */
    void finished(long bytes) {
        done.addAndGet(bytes);
        if (options.progress() == CopyProgress.NONE) return;
        synchronized (progressLock) {
            long now = done.get();
            if (now <= reported || now >= total) return;
            reported = now;
            options.progress().progress(now, total);
        }
    }

    /** Tells the listener the copy is complete. */
    void finishedAll() {
        synchronized (progressLock) {
            options.progress().progress(total, total);
        }
    }
}

package io.pagewise.nbd.server.protocol;

import java.time.Duration;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * A timeout of one connection, checked on the server's timer: while {@link #running()} says it runs, it fires (once)
 * when nothing has {@link #touch touched} it for the timeout. {@link IdleWatch} and {@link ReplyWatch} say when it
 * runs and what touches it.
 */
abstract class TimeoutWatch {
    private final ScheduledExecutorService timer;
    private final long timeoutNanos;
    private final Runnable onTimeout;
    private volatile long lastTouched = System.nanoTime();
    private volatile boolean stopped;

    /**
     * @param timer     where the checks run; they are short
     * @param timeout   the time allowed, positive (zero for a watch that never runs)
     * @param onTimeout what ends the connection; run on the timer's thread
     */
    TimeoutWatch(ScheduledExecutorService timer, Duration timeout, Runnable onTimeout) {
        this.timer = timer;
        this.timeoutNanos = timeout.toNanos();
        this.onTimeout = onTimeout;
    }

    final boolean enabled() {
        return timeoutNanos > 0;
    }

    /** Whether the timeout runs now; when it does not, the next check comes a whole timeout later. */
    abstract boolean running();

    /** Starts watching, touched now. */
    final void start() {
        if (!enabled()) return;
        lastTouched = System.nanoTime();
        checkIn(timeoutNanos);
    }

    /** onTimeout will not run after this returns, unless it is already running. */
    final void stop() {
        stopped = true;
    }

    /** Something happened that starts the timeout afresh. */
    final void touch() {
        if (enabled()) lastTouched = System.nanoTime();
    }

    private void checkIn(long nanos) {
        try {
            timer.schedule(this::check, nanos, TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            // the server has stopped: nothing left to watch
        }
    }

    private void check() {
        if (stopped) return;
        long quiet = System.nanoTime() - lastTouched;
        if (!running()) {
            checkIn(timeoutNanos);
        } else if (quiet < timeoutNanos) {
            checkIn(timeoutNanos - quiet);
        } else {
            stopped = true;
            onTimeout.run();
        }
    }
}

package io.pagewise.nbd.server;

import java.time.Duration;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The reply timeout of one connection: a reply the socket has taken no byte of for the timeout belongs to a client
 * that stopped reading, and onStalled (once) cuts the connection, which gives back what its unsent replies held.
 * Four such connections held the whole in-flight budget, and every other client's READs waited until they read or
 * left (an outside review).
 */
final class ReplyWatch {
    private static final ReplyWatch OFF = new ReplyWatch(null, Duration.ZERO, () -> { });

    private final ScheduledExecutorService timer;
    private final long timeoutNanos;
    private final Runnable onStalled;
    /** Whether a reply is being written now; set after lastProgress, so a check that sees it sees that too. */
    private volatile boolean sending;
    /** When the reply being written last moved a byte, or began. */
    private volatile long lastProgress;
    private volatile boolean stopped;

    /**
     * @param timer     where the checks run; they are short
     * @param timeout   how long a reply may take no byte, positive
     * @param onStalled what cuts the connection; run on the timer's thread
     */
    ReplyWatch(ScheduledExecutorService timer, Duration timeout, Runnable onStalled) {
        this.timer = timer;
        this.timeoutNanos = timeout.toNanos();
        this.onStalled = onStalled;
    }

    /** {@return a watch that never fires, for servers without a reply timeout} */
    static ReplyWatch off() {
        return OFF;
    }

    private boolean enabled() {
        return timeoutNanos > 0;
    }

    void start() {
        if (enabled()) checkIn(timeoutNanos);
    }

    /** onStalled will not run after this returns, unless it is already running. */
    void stop() {
        stopped = true;
    }

    /** A reply starts going out (under the connection's sending lock). */
    void sending() {
        if (!enabled()) return;
        lastProgress = System.nanoTime();
        sending = true;
    }

    /** The socket took bytes of the reply. */
    void progressed() {
        if (enabled()) lastProgress = System.nanoTime();
    }

    /** The reply is out, or its sending failed. */
    void sent() {
        sending = false;
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
        if (!sending) {
            checkIn(timeoutNanos);
            return;
        }
        long quiet = System.nanoTime() - lastProgress;
        if (quiet < timeoutNanos) {
            checkIn(timeoutNanos - quiet);
        } else {
            stopped = true;
            onStalled.run();
        }
    }
}

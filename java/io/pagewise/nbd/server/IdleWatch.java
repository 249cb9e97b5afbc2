package io.pagewise.nbd.server;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ByteChannel;
import java.time.Duration;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The idle timeout of one connection in transmission: once it has had no request in flight and received no byte
 * for the timeout, onIdle runs (once). A request counts as in flight from the moment its header and payload are
 * read until its reply is sent, so a slow request is never taken for idleness.
 */
final class IdleWatch {
    private static final IdleWatch OFF = new IdleWatch(null, Duration.ZERO, () -> { });

    private final ScheduledExecutorService timer;
    private final long timeoutNanos;
    private final Runnable onIdle;
    private final AtomicInteger inFlight = new AtomicInteger();
    private volatile long lastActivity = System.nanoTime();
    private volatile boolean stopped;

    /**
     * @param timer   where the checks run; they are short
     * @param timeout idle time allowed, positive
     * @param onIdle  what ends the connection; run on the timer's thread
     */
    public IdleWatch(ScheduledExecutorService timer, Duration timeout, Runnable onIdle) {
        this.timer = timer;
        this.timeoutNanos = timeout.toNanos();
        this.onIdle = onIdle;
    }

    /** {@return a watch that never fires, for servers without an idle timeout} */
    public static IdleWatch off() {
        return OFF;
    }

    private boolean enabled() {
        return timeoutNanos > 0;
    }

    /** Starts watching; the connection counts as active now. */
    void start() {
        if (!enabled()) return;
        lastActivity = System.nanoTime();
        checkIn(timeoutNanos);
    }

    /** Stops watching: onIdle will not run after this returns, unless it is already running. */
    void stop() {
        stopped = true;
    }

    void requestStarted() {
        if (!enabled()) return;
        inFlight.incrementAndGet();
        lastActivity = System.nanoTime();
    }

    void requestEnded() {
        if (!enabled()) return;
        lastActivity = System.nanoTime();
        inFlight.decrementAndGet();
    }

    /** {@return channel, or a view of it that counts every byte received as activity when the watch is on} */
    ByteChannel watching(ByteChannel channel) {
        return enabled() ? new Received(channel) : channel;
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
        long quiet = System.nanoTime() - lastActivity;
        if (inFlight.get() > 0) {
            checkIn(timeoutNanos);
        } else if (quiet < timeoutNanos) {
            checkIn(timeoutNanos - quiet);
        } else {
            stopped = true;
            onIdle.run();
        }
    }

    /** Reads through to the socket and notes when bytes arrived. */
    private final class Received implements ByteChannel {
        private final ByteChannel channel;

        Received(ByteChannel channel) {
            this.channel = channel;
        }

        @Override
        public int read(ByteBuffer dst) throws IOException {
            int n = channel.read(dst);
            if (n > 0) lastActivity = System.nanoTime();
            return n;
        }

        @Override
        public int write(ByteBuffer src) throws IOException {
            return channel.write(src);
        }

        @Override
        public boolean isOpen() {
            return channel.isOpen();
        }

        @Override
        public void close() throws IOException {
            channel.close();
        }
    }
}

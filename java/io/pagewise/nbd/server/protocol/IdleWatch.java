package io.pagewise.nbd.server.protocol;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ByteChannel;
import java.time.Duration;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The idle timeout of one connection in transmission: once it has had no request in flight and received no byte
 * for the timeout, onIdle runs (once). A request counts as in flight from the moment its header and payload are
 * read until its reply is sent, so a slow request is never taken for idleness.
 */
public final class IdleWatch extends TimeoutWatch {
    private static final IdleWatch OFF = new IdleWatch(null, Duration.ZERO, () -> { });

    private final AtomicInteger inFlight = new AtomicInteger();

    /**
     * @param timer   where the checks run; they are short
     * @param timeout idle time allowed, positive
     * @param onIdle  what ends the connection; run on the timer's thread
     */
    public IdleWatch(ScheduledExecutorService timer, Duration timeout, Runnable onIdle) {
        super(timer, timeout, onIdle);
    }

    /** {@return a watch that never fires, for servers without an idle timeout} */
    public static IdleWatch off() {
        return OFF;
    }

    @Override
    boolean running() {
        return inFlight.get() == 0;
    }

    void requestStarted() {
        if (!enabled()) return;
        inFlight.incrementAndGet();
        touch();
    }

    void requestEnded() {
        if (!enabled()) return;
        touch();
        inFlight.decrementAndGet();
    }

    /** {@return channel, or a view of it that counts every byte received as activity when the watch is on} */
    ByteChannel watching(ByteChannel channel) {
        return enabled() ? new Received(channel) : channel;
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
            if (n > 0) touch();
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

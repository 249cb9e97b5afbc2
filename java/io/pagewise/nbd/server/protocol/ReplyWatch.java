package io.pagewise.nbd.server.protocol;

import java.time.Duration;
import java.util.concurrent.ScheduledExecutorService;

/**
 * The reply timeout of one connection: a reply the socket has taken no byte of for the timeout belongs to a client
 * that stopped reading, and onStalled (once) cuts the connection, which gives back what its unsent replies held.
 * Four such connections held the whole in-flight budget, and every other client's READs waited until they read or
 * left (an outside review).
 */
public final class ReplyWatch extends TimeoutWatch {
    private static final ReplyWatch OFF = new ReplyWatch(null, Duration.ZERO, () -> { });

    /** Whether a reply is being written now; set after the touch, so a check that sees it sees that too. */
    private volatile boolean sending;

    /**
     * @param timer     where the checks run; they are short
     * @param timeout   how long a reply may take no byte, positive
     * @param onStalled what cuts the connection; run on the timer's thread
     */
    public ReplyWatch(ScheduledExecutorService timer, Duration timeout, Runnable onStalled) {
        super(timer, timeout, onStalled);
    }

    /** {@return a watch that never fires, for servers without a reply timeout} */
    public static ReplyWatch off() {
        return OFF;
    }

    @Override
    boolean running() {
        return sending;
    }

    /** A reply starts going out (under the connection's sending lock). */
    void sending() {
        if (!enabled()) return;
        touch();
        sending = true;
    }

    /** The socket took bytes of the reply. */
    void progressed() {
        touch();
    }

    /** The reply is out, or its sending failed. */
    void sent() {
        sending = false;
    }
}

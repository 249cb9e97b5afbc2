package io.pagewise.nbd.server.service;

import io.pagewise.nbd.server.access.AddressRange;
import io.pagewise.nbd.server.access.ClientAccess;
import io.pagewise.nbd.server.exports.Exports;
import io.pagewise.nbd.server.protocol.LogThrottle;
import io.pagewise.nbd.server.protocol.ServerContext;
import io.pagewise.nbd.tls.ServerTls;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A server's connections, from accept to close: the accept loop, admission ({@link AdmissionControl}), each
 * {@link Connection}'s lifecycle, the timer of the handshake and idle timeouts, and the graceful stop.
 */
public final class Connections {
    /**
     * What every connection of a server is run with.
     *
     * @param exports          the exports by name
     * @param context          the engine's shared budget, buffers, counters and logger
     * @param tls              the server's TLS
     * @param events           where connection events are counted
     * @param maxConnections   connections in transmission at once
     * @param maxHandshakes    connections in the handshake at once
     * @param handshakeTimeout time to finish the handshake, zero for no limit
     * @param idleTimeout      time without requests before a connection is closed, zero for no limit
     * @param replyTimeout     time a reply may go without the socket taking a byte before the connection is cut,
     *                         zero for no limit
     * @param shutdownGrace    time connections get at stop to finish before they are cut
     * @param access           who may connect
     */
    public record Settings(Exports exports, ServerContext context, ServerTls tls, ConnectionEvents events,
                           int maxConnections, int maxHandshakes, Duration handshakeTimeout, Duration idleTimeout,
                           Duration replyTimeout, Duration shutdownGrace, ClientAccess access) {}

    private final Settings settings;
    private final Listener listener;
    private final AdmissionControl admission;
    private final Set<Connection> open = ConcurrentHashMap.newKeySet();
    private final AtomicInteger ids = new AtomicInteger();
    private final LogThrottle timeoutLog = new LogThrottle("dropped");
    private final LogThrottle refusalLog = new LogThrottle("refused");
    private final LogThrottle violationLog = new LogThrottle("dropped for protocol errors");
    private final LogThrottle endLog = new LogThrottle("ended without a clean disconnect");
    private final LogThrottle memoryLog = new LogThrottle("dropped for want of direct memory");
    /** Runs the handshake timeouts and the idle checks. */
    private final ScheduledThreadPoolExecutor timer;
    private final Thread acceptor;
    private volatile boolean stopping;

    /** Connections accepted from listener, once {@link #start()}ed. */
    public Connections(Settings settings, Listener listener) {
        this.settings = settings;
        this.listener = listener;
        this.admission = new AdmissionControl(settings.maxConnections(), settings.maxHandshakes(), settings.events(), log());
        this.timer = new ScheduledThreadPoolExecutor(1, r -> daemon(r, "nbd-timer"));
        timer.setRemoveOnCancelPolicy(true);
        this.acceptor = daemon(this::acceptLoop, "nbd-accept");
    }

    /** Starts accepting. */
    public void start() {
        acceptor.start();
    }

    /** {@return the connections open now, in the handshake or in transmission} */
    public int count() { return open.size(); }

    /** {@return the connections in transmission now} */
    public int transmitting() { return admission.transmitting(); }

    /**
     * Stops: the listener is closed, every connection stops reading and gets the shutdown grace to answer what it
     * has read, and is cut after it; returns when every connection and the acceptor have ended.
     */
    public void stop() throws InterruptedException {
        stopping = true;
        closeQuietly(listener);
        for (Connection connection : open) connection.stopReading();
        long deadline = System.nanoTime() + settings.shutdownGrace().toNanos();
        for (Connection connection : open) {
            if (!connection.awaitEnd(deadline - System.nanoTime())) connection.cut();
        }
        for (Connection connection : open) connection.join();
        acceptor.join(10_000);
        timer.shutdownNow();
        for (LogThrottle throttle : List.of(timeoutLog, refusalLog, violationLog, endLog, memoryLog, settings.context().requestLog())) {
            throttle.reportHeldBack(log());
        }
        admission.reportHeldBack();
    }

    private void acceptLoop() {
        while (!stopping) {
            SocketChannel channel;
            try {
                channel = listener.accept();
            } catch (ClosedChannelException e) {
                return;
            } catch (IOException e) {
                log().log(Level.ERROR, "accept failed: " + e.getMessage());
                sleepQuietly();
                continue;
            }
            int id = ids.incrementAndGet(); // every accepted socket has an id of its own, refused ones too
            String refusal = settings.access().refusal(channel, listener.isUnix());
            if (refusal != null) {
                refused("connection " + id + describePeer(channel), "refused: " + refusal);
                closeQuietly(channel);
                continue;
            }
            if (!admission.takeHandshakeSlot(() -> stopping)) {
                closeQuietly(channel);
                continue;
            }
            Connection connection = new Connection(id, channel, this);
            open.add(connection);
            admission.enterHandshake(connection);
            settings.events().connectionAccepted();
            if (stopping) connection.stopReading();
            connection.start();
        }
    }

    void ended(Connection connection) { open.remove(connection); }

    void handshakeTimedOut(int id) {
        settings.events().handshakeTimedOut();
        timeoutLog.warn(log(), () -> "connection " + id + ": dropped: handshake not finished within "
                + seconds(settings.handshakeTimeout()) + " (--handshake-timeout)");
    }

    /** Logs (at most once a second) and counts a client the allow-lists kept out. */
    void refused(String who, String why) {
        settings.events().accessRefused();
        refusalLog.warn(log(), () -> who + ": " + why);
    }

    /** Logs (at most once a second) and counts a client dropped for breaking the protocol. */
    void protocolViolation(String who, String why) {
        settings.events().protocolError();
        violationLog.warn(log(), () -> who + ": dropped: " + why);
    }

    /** Logs at ERROR (at most once a second) a connection dropped because request payloads found no direct memory. */
    void outOfMemory(String who, String why) {
        memoryLog.log(log(), Level.ERROR, () -> who + ": dropped: " + why);
    }

    /** Logs at INFO (at most once a second: a flood of clients that connect and hang up) a connection that just ended. */
    void endedAbruptly(String who, String how) {
        endLog.log(log(), System.Logger.Level.INFO, () -> who + ": " + how);
    }

    private String describePeer(SocketChannel channel) {
        if (listener.isUnix()) return "";
        try {
            return " from " + AddressRange.describe(channel.getRemoteAddress());
        } catch (IOException e) {
            return "";
        }
    }

    boolean stopping() { return stopping; }

    ClientAccess access() { return settings.access(); }

    boolean isUnix() { return listener.isUnix(); }

    AdmissionControl admission() { return admission; }

    ScheduledThreadPoolExecutor timer() { return timer; }

    Exports exports() { return settings.exports(); }

    ServerContext context() { return settings.context(); }

    ServerTls tls() { return settings.tls(); }

    ConnectionEvents events() { return settings.events(); }

    System.Logger log() { return settings.context().log(); }

    Duration handshakeTimeout() { return settings.handshakeTimeout(); }

    Duration idleTimeout() { return settings.idleTimeout(); }

    Duration replyTimeout() { return settings.replyTimeout(); }

    Duration shutdownGrace() { return settings.shutdownGrace(); }

    /** A duration for messages: whole seconds as "N s", else milliseconds. */
    static String seconds(Duration duration) {
        long millis = duration.toMillis();
        return millis % 1000 == 0 ? millis / 1000 + " s" : millis + " ms";
    }

    private static Thread daemon(Runnable body, String name) {
        Thread thread = new Thread(body, name);
        thread.setDaemon(true);
        return thread;
    }

    private static void closeQuietly(AutoCloseable closeable) {
        try {
            closeable.close();
        } catch (Exception ignored) {
            // nothing more to do for a socket that will not close
        }
    }

    private static void sleepQuietly() {
        try {
            Thread.sleep(100);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}

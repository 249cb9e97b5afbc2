package io.pagewise.nbd.server.service;

import io.pagewise.nbd.server.ExportEntry;
import io.pagewise.nbd.server.access.AccessRefused;
import io.pagewise.nbd.server.access.AddressRange;
import io.pagewise.nbd.server.protocol.Handshake;
import io.pagewise.nbd.server.protocol.IdleWatch;
import io.pagewise.nbd.server.protocol.PayloadBuffers;
import io.pagewise.nbd.server.protocol.ProtocolViolation;
import io.pagewise.nbd.server.protocol.ReplyWatch;
import io.pagewise.nbd.server.protocol.Session;
import io.pagewise.nbd.server.protocol.Transmission;
import io.pagewise.nbd.tls.TlsChannel;
import java.io.Closeable;
import java.io.EOFException;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.net.StandardSocketOptions;
import java.nio.channels.SocketChannel;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One client from accept to close, on a thread of its own: its handshake under the handshake timeout, its entry to
 * transmission, then its {@link Transmission} under the idle timeout. Each phase change is one compare-and-set, so
 * a timeout, a drop and an admission cannot both win.
 */
final class Connection {
    private enum Phase { HANDSHAKE, ADMITTING, TRANSMISSION, HANDSHAKE_TIMED_OUT, DROPPED }

    final int id;
    final long connectedNanos = System.nanoTime();
    private final SocketChannel channel;
    private final Connections server;
    private final Thread thread;
    private final AtomicReference<Phase> phase = new AtomicReference<>(Phase.HANDSHAKE);
    /** The slot the server took for this connection, until leaveHandshake() gives it back. */
    private final AtomicBoolean holdsHandshakeSlot = new AtomicBoolean(true);
    /** Set when the idle timeout closed the connection, which it has logged. */
    private volatile boolean idleClosed;
    /** Set when the reply timeout cut the connection: the write that fails then is no client's doing. */
    private volatile boolean replyStalled;
    /** The TLS channel over the socket once the client started TLS; only this connection's thread sets it. */
    private TlsChannel tlsChannel;
    /** This connection's handshake once begun, for the exports it was handed; only this connection's thread sets it. */
    private Handshake handshake;
    /** Set once the handshake's last reply is sent; until then the handshake timeout holds, admitted or not. */
    private volatile boolean negotiated;
    /** The handshake timeout closed this connection after it was admitted to transmission, before GO's replies went. */
    private volatile boolean timedOutAdmitted;

    Connection(int id, SocketChannel channel, Connections server) {
        this.id = id;
        this.channel = channel;
        this.server = server;
        this.thread = new Thread(this::run, "nbd-connection-" + id);
        thread.setDaemon(true);
    }

    void start() {
        thread.start();
    }

    private void run() {
        String who = "connection " + id;
        System.Logger log = server.log();
        try {
            if (!server.isUnix()) {
                channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
                who += " from " + AddressRange.describe(channel.getRemoteAddress());
            }
            Session session = handshake(who);
            if (session == null || server.stopping()) return;
            server.events().handshakeCompleted();
            session = session.forConnection();
            if (log.isLoggable(Level.DEBUG)) {
                log.log(Level.DEBUG, who + ": serving '" + session.entry().name() + "' (" + session.entry().device()
                        + ")" + (session.extendedHeaders() ? ", extended headers"
                        : session.structuredReplies() ? ", structured replies" : ""));
            }
            IdleWatch idle = server.idleTimeout().isZero() ? IdleWatch.off()
                    : new IdleWatch(server.timer(), server.idleTimeout(), this::idleExpired);
            ReplyWatch replyWatch = server.replyTimeout().isZero() ? ReplyWatch.off()
                    : new ReplyWatch(server.timer(), server.replyTimeout(), this::repliesStalled);
            new Transmission(channel, tlsChannel, session, who, server.context(), idle, replyWatch).serve();
        } catch (AccessRefused e) {
            server.refused(who, e.getMessage());
        } catch (ProtocolViolation e) {
            server.protocolViolation(who, e.getMessage());
        } catch (PayloadBuffers.OutOfDirectMemory e) {
            server.outOfMemory(who, e.getMessage());
        } catch (EOFException e) {
            if (!server.stopping() && !idleClosed && !replyStalled) {
                server.endedAbruptly(who, "client went away: " + e.getMessage());
            }
        } catch (IOException e) {
            if (!server.stopping() && !idleClosed && !replyStalled) {
                server.endedAbruptly(who, "closed: " + (e.getMessage() != null ? e.getMessage() : e.toString()));
            }
        } catch (RuntimeException e) {
            if (!server.stopping()) log.log(Level.ERROR, who + ": closed: " + e, e);
        } finally {
            // The TLS channel tells the client with close_notify, then closes the socket.
            closeQuietly(tlsChannel != null ? tlsChannel : channel);
            if (handshake != null) {
                for (ExportEntry entry : handshake.found()) server.exports().release(entry);
            }
            leaveHandshake();
            if (phase.get() == Phase.TRANSMISSION) server.admission().leaveTransmission();
            server.ended(this);
        }
    }

    /**
     * Runs the handshake under the handshake timeout: when it expires first, or the connection is dropped to make
     * room for a newer one, the socket is closed under the handshake, and this returns null.
     */
    private Session handshake(String who) throws IOException {
        ScheduledFuture<?> timeout = server.handshakeTimeout().isZero() ? null
                : server.timer().schedule(this::handshakeExpired, server.handshakeTimeout().toNanos(), TimeUnit.NANOSECONDS);
        Session session;
        handshake = new Handshake(channel, server.tls().settings(), server.exports(),
                server.context().maxPayload(), server::stopping, new Handshake.Admission() {
                    @Override public String refusal() { return admit(); }

                    @Override public String tlsRefusal(javax.net.ssl.SSLSession tls) { return server.access().refusal(tls); }
                }, server.log(), who);
        try {
            session = handshake.negotiate();
            negotiated = true;
            tlsChannel = handshake.tls();
            if (tlsChannel != null) server.tls().clientArrived();
        } catch (IOException e) {
            if (!timedOutAdmitted && (phase.get() == Phase.HANDSHAKE || phase.get() == Phase.TRANSMISSION)) throw e;
            session = null;
        } finally {
            if (timeout != null) timeout.cancel(false);
            leaveHandshake();
        }
        if (phase.get() == Phase.HANDSHAKE_TIMED_OUT || timedOutAdmitted) server.handshakeTimedOut(id);
        return phase.get() == Phase.TRANSMISSION && !timedOutAdmitted ? session : null;
    }

    /** The handshake's question before GO or EXPORT_NAME: null once this connection counts as transmitting. */
    private String admit() {
        // A connection being dropped or timed out has its socket closed already: its answer does not matter.
        if (!phase.compareAndSet(Phase.HANDSHAKE, Phase.ADMITTING)) return "the handshake took too long";
        String refusal = server.admission().enterTransmission(id);
        phase.set(refusal == null ? Phase.TRANSMISSION : Phase.HANDSHAKE);
        return refusal;
    }

    /** Takes this connection off the handshaking list and gives its handshake slot back; once only. */
    private void leaveHandshake() {
        if (holdsHandshakeSlot.compareAndSet(true, false)) server.admission().leaveHandshake(this);
    }

    private void handshakeExpired() {
        if (phase.compareAndSet(Phase.HANDSHAKE, Phase.HANDSHAKE_TIMED_OUT)) {
            closeQuietly(channel);
        } else if (phase.get() == Phase.TRANSMISSION && !negotiated) {
            // Admitted, but GO's last replies are not sent yet: a client that does not read them would hold its
            // handshake slot for ever (the accept loop waits for one), so the timeout still holds here.
            timedOutAdmitted = true;
            closeQuietly(channel);
        }
    }

    /** Drops this connection if it is still in the handshake; true when it did. */
    boolean dropFromHandshake() {
        if (!phase.compareAndSet(Phase.HANDSHAKE, Phase.DROPPED)) return false;
        closeQuietly(channel);
        return true;
    }

    /** The idle timeout: logged here, then reading stops; what is in flight is still answered. */
    private void idleExpired() {
        idleClosed = true;
        server.events().idleTimedOut();
        server.log().log(Level.INFO, "connection " + id + ": closed after " + Connections.seconds(server.idleTimeout())
                + " without requests (--idle-timeout)");
        stopReading();
    }

    /** A reply has gone without the socket taking a byte for the reply timeout: the client stopped reading. */
    private void repliesStalled() {
        replyStalled = true;
        server.events().replyTimedOut();
        server.log().log(Level.WARNING, "connection " + id + ": cut: a reply unread for "
                + Connections.seconds(server.replyTimeout()) + " (--reply-timeout)");
        closeQuietly(channel);
    }

    /** Waits up to nanos (none when not positive) for the connection to end by itself; true when it has. */
    boolean awaitEnd(long nanos) throws InterruptedException {
        if (nanos > 0) thread.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(nanos)));
        return !thread.isAlive();
    }

    /** Closes the socket under a connection that did not finish in time at close(): its pending replies are dropped. */
    void cut() {
        server.log().log(Level.WARNING, "connection " + id + ": cut at shutdown: replies still unsent after "
                + Connections.seconds(server.shutdownGrace()));
        closeQuietly(channel);
    }

    /** Ends the connection's reading; requests already read still run and are answered. */
    void stopReading() {
        try {
            channel.shutdownInput();
        } catch (IOException e) {
            closeQuietly(channel);
        }
    }

    void join() throws InterruptedException {
        thread.join();
    }

    static void closeQuietly(Closeable closeable) {
        try {
            closeable.close();
        } catch (IOException ignored) {
            // nothing more to do for a socket that will not close
        }
    }
}

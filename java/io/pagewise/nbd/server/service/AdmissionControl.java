package io.pagewise.nbd.server.service;

import io.pagewise.nbd.server.protocol.LogThrottle;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Iterator;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

/**
 * The two limits on connections: at most maxHandshakes in the handshake, where the oldest is dropped to make room
 * for a new one, so that clients that connect and send nothing cannot keep out one that completes its handshake;
 * and at most maxConnections in transmission, where one that completes its handshake while all are taken is
 * refused.
 */
final class AdmissionControl {
    private final int maxConnections;
    private final int maxHandshakes;
    private final ConnectionEvents events;
    private final System.Logger log;
    /** Connections in the handshake, oldest first: the first droppable one makes room for a new one. Guarded by itself. */
    private final Deque<Connection> handshaking = new ArrayDeque<>();
    /** One permit per handshake thread, so that a flood of connections cannot start more than maxHandshakes. */
    private final Semaphore handshakeSlots;
    /** Connections admitted to transmission, against maxConnections. */
    private final AtomicInteger transmitting = new AtomicInteger();
    private final LogThrottle dropLog = new LogThrottle("dropped");
    private final LogThrottle refusalLog = new LogThrottle("refused");

    AdmissionControl(int maxConnections, int maxHandshakes, ConnectionEvents events, System.Logger log) {
        this.maxConnections = maxConnections;
        this.maxHandshakes = maxHandshakes;
        this.handshakeSlots = new Semaphore(maxHandshakes);
        this.events = events;
        this.log = log;
    }

    /**
     * Takes a handshake slot for a new connection, dropping the oldest pending handshakes when all are taken;
     * false when the server is stopping instead.
     */
    boolean takeHandshakeSlot(BooleanSupplier stopping) {
        try {
            if (handshakeSlots.tryAcquire()) return true;
            while (!stopping.getAsBoolean()) {
                dropOldestHandshake();
                // The dropped connection's thread gives its slot back as soon as its socket is closed.
                if (handshakeSlots.tryAcquire(1, TimeUnit.SECONDS)) return true;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return false;
    }

    /** Lists a connection that took a slot as in the handshake, the newest. */
    void enterHandshake(Connection connection) {
        synchronized (handshaking) {
            handshaking.addLast(connection);
        }
    }

    /** Takes a connection off the handshaking list and gives its slot back; the caller does so once only. */
    void leaveHandshake(Connection connection) {
        synchronized (handshaking) {
            handshaking.remove(connection);
        }
        handshakeSlots.release();
    }

    /** Counts a connection into transmission; null when it may enter, else why it is refused (and not counted). */
    String enterTransmission(int id) {
        if (transmitting.incrementAndGet() <= maxConnections) return null;
        transmitting.decrementAndGet();
        events.connectionRejected();
        String why = "all " + maxConnections + " transmission slots are taken (--max-connections); try again later";
        refusalLog.warn(log, () -> "connection " + id + ": refused entry to transmission: " + why);
        return why;
    }

    /** A connection counted by {@link #enterTransmission} has ended. */
    void leaveTransmission() {
        transmitting.decrementAndGet();
    }

    /** {@return the connections in transmission now} */
    int transmitting() {
        return transmitting.get();
    }

    private void dropOldestHandshake() {
        Connection dropped = dropFirstDroppable();
        if (dropped == null) return;
        events.handshakeDropped();
        dropLog.warn(log, () -> "connection " + dropped.id + ": dropped in the handshake after "
                + Connections.seconds(Duration.ofNanos(System.nanoTime() - dropped.connectedNanos))
                + " to make room for a new one: " + maxHandshakes + " handshakes pending (--max-handshakes)");
    }

    /** Drops the oldest connection still in the handshake and takes it off the list; null when there is none. */
    private Connection dropFirstDroppable() {
        synchronized (handshaking) {
            for (Iterator<Connection> it = handshaking.iterator(); it.hasNext(); ) {
                Connection oldest = it.next();
                if (oldest.dropFromHandshake()) {
                    it.remove();
                    return oldest;
                }
            }
        }
        return null;
    }

    /** Logs how many drops and refusals were held back since the last logged, at stop. */
    void reportHeldBack() {
        dropLog.reportHeldBack(log);
        refusalLog.reportHeldBack(log);
    }
}

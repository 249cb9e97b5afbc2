package io.pagewise.nbd.server;

import io.pagewise.internal.OperationCounter;
import io.pagewise.nbd.NbdCommand;
import io.pagewise.nbd.server.metrics.RequestStats;
import io.pagewise.nbd.server.protocol.ServerContext;
import io.pagewise.nbd.server.service.ConnectionEvents;
import io.pagewise.nbd.wire.Protocol;
import java.io.PrintStream;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * Counts of what a server did: per command, requests, bytes and errors; plus connections and requests in flight.
 *
 * <p>Some gauges show what the server holds right now, so a test or a monitor can check that everything taken for
 * requests came back once they were answered: with no request in flight, {@link #requestsInFlight()},
 * {@link #inflightBytesInUse()}, {@link #payloadBuffersOutstanding()} and {@link #payloadBytesHeld()} are all 0,
 * whether the requests succeeded or failed.
 */
public final class ServerStats {
    private static final int COMMANDS = Protocol.CMD_BLOCK_STATUS + 1;

    private final long startNanos = System.nanoTime();
    /** Per command, and at COMMANDS the commands NBD does not define. */
    private final OperationCounter[] commands = commandCounters();
    /** The flush of each export as the server stops, which no client asked for. */
    private final OperationCounter shutdownFlush = new OperationCounter();
    private final LongAdder connections = new LongAdder();
    private final LongAdder rejectedConnections = new LongAdder();
    private final LongAdder protocolErrors = new LongAdder();
    private final LongAdder handshakeTimeouts = new LongAdder();
    private final LongAdder droppedHandshakes = new LongAdder();
    private final LongAdder idleTimeouts = new LongAdder();
    private final LongAdder replyTimeouts = new LongAdder();
    private final LongAdder accessRefusals = new LongAdder();
    private final LongAdder handshakes = new LongAdder();
    private final java.util.concurrent.ConcurrentHashMap<String, ExportStats> exports = new java.util.concurrent.ConcurrentHashMap<>();
    private final AtomicInteger inFlight = new AtomicInteger();
    private final AtomicInteger mostInFlight = new AtomicInteger();
    private final AtomicLong payloadBytesHeld = new AtomicLong();
    private final AtomicLong peakPayloadBytesHeld = new AtomicLong();
    /** The engine's shared budget and buffer pool, read for the gauges; null until the server has made them. */
    private volatile ServerContext engine;

    /** Only a server makes these ({@link NbdServer#stats()}). */
    ServerStats() {}

    /** What the server engine counts through: these counting methods, reached from its non-exported package. */
    RequestStats counters() {
        return new RequestStats() {
            @Override public void requestReceived() { ServerStats.this.requestReceived(); }

            @Override public void requestAnswered() { ServerStats.this.requestAnswered(); }

            @Override public void request(int command, long length, boolean failed) {
                ServerStats.this.request(command, length, failed);
            }

            @Override public void request(String export, int command, long length, boolean failed, long nanos) {
                request(export, command, 0, length, failed, nanos);
            }

            @Override
            public void request(String export, int command, long offset, long length, boolean failed, long nanos) {
                ServerStats.this.request(command, offset, length, failed, nanos);
                exports.computeIfAbsent(export, ExportStats::new).request(command, length, failed, nanos);
            }

            @Override public void payloadBuffersTaken(long bytes) { ServerStats.this.payloadBuffersTaken(bytes); }

            @Override public void payloadBuffersGiven(long bytes) { ServerStats.this.payloadBuffersGiven(bytes); }
        };
    }

    /** What the connection lifecycle counts through, from its non-exported package. */
    ConnectionEvents connectionEvents() {
        return new ConnectionEvents() {
            @Override public void connectionAccepted() { ServerStats.this.connectionAccepted(); }

            @Override public void connectionRejected() { ServerStats.this.connectionRejected(); }

            @Override public void protocolError() { ServerStats.this.protocolError(); }

            @Override public void handshakeTimedOut() { ServerStats.this.handshakeTimedOut(); }

            @Override public void handshakeDropped() { ServerStats.this.handshakeDropped(); }

            @Override public void idleTimedOut() { ServerStats.this.idleTimedOut(); }
            @Override public void replyTimedOut() { replyTimeouts.increment(); }

            @Override public void accessRefused() { accessRefusals.increment(); }

            @Override public void handshakeCompleted() { handshakes.increment(); }
        };
    }

    /** Lets the gauges read the server's in-flight budget and payload buffer pool. */
    void watch(ServerContext context) {
        engine = context;
    }

    private static OperationCounter[] commandCounters() {
        OperationCounter[] counters = new OperationCounter[COMMANDS + 1];
        for (int i = 0; i < counters.length; i++) counters[i] = new OperationCounter();
        return counters;
    }

    private static int index(int command) {
        return command >= 0 && command < COMMANDS ? command : COMMANDS;
    }

    void request(int command, long length, boolean failed) {
        request(command, 0, length, failed, 0);
    }

    /** A request answered nanos after it was read: bytes count only when it succeeded, its range whatever happened. */
    void request(int command, long offset, long length, boolean failed, long nanos) {
        OperationCounter counter = commands[index(command)];
        long moved = !failed && movesBytes(command) ? length : 0;
        if (hasRange(command)) {
            counter.count(offset, length, moved, nanos, failed);
        } else {
            counter.count(moved, nanos, failed);
        }
    }

    /** The server's own flush of an export as it stops, which took nanos. */
    void flushedAtShutdown(long nanos, boolean failed) {
        shutdownFlush.count(0, nanos, failed);
    }

    /** The name the stats filter gives the device call a command makes: {@code zero}, {@code extents}. */
    private static String name(int command) {
        switch (command) {
            case Protocol.CMD_WRITE_ZEROES: return "zero";
            case Protocol.CMD_BLOCK_STATUS: return "extents";
            default: return Protocol.commandName(command).toLowerCase(Locale.ROOT);
        }
    }

    /** Whether a command's offset and length name a range, which the size breakdown counts. */
    private static boolean hasRange(int command) {
        return movesBytes(command) || command == Protocol.CMD_BLOCK_STATUS;
    }

    /** Whether a command's length counts as bytes moved. */
    static boolean movesBytes(int command) {
        return command == Protocol.CMD_READ || command == Protocol.CMD_WRITE || command == Protocol.CMD_TRIM
                || command == Protocol.CMD_WRITE_ZEROES || command == Protocol.CMD_CACHE;
    }

    /** A request was read: it is in flight until {@link #requestAnswered()}. */
    void requestReceived() {
        mostInFlight.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
    }

    void requestAnswered() { inFlight.decrementAndGet(); }

    void connectionAccepted() { connections.increment(); }

    void connectionRejected() { rejectedConnections.increment(); }

    void protocolError() { protocolErrors.increment(); }

    void handshakeTimedOut() { handshakeTimeouts.increment(); }

    void handshakeDropped() { droppedHandshakes.increment(); }

    void idleTimedOut() { idleTimeouts.increment(); }

    void payloadBuffersTaken(long bytes) {
        long held = payloadBytesHeld.addAndGet(bytes);
        peakPayloadBytesHeld.accumulateAndGet(held, Math::max);
    }

    void payloadBuffersGiven(long bytes) { payloadBytesHeld.addAndGet(-bytes); }

    /**
     * {@return the requests of a command so far, failed ones included}
     *
     * @param command the command
     */
    public long ops(NbdCommand command) { return commands[command.code()].calls(); }

    /**
     * {@return the bytes moved by successful requests of a command} (READ, WRITE, TRIM, WRITE_ZEROES, CACHE; 0 for others)
     *
     * @param command the command
     */
    public long bytes(NbdCommand command) { return commands[command.code()].bytes(); }

    /**
     * {@return the requests of a command answered with an error}
     *
     * @param command the command
     */
    public long errors(NbdCommand command) { return commands[command.code()].errors(); }

    /** {@return the flushes of the exports the server made as it stopped}, counted apart from the clients' FLUSH */
    public long shutdownFlushes() { return shutdownFlush.calls(); }

    /** {@return the requests with a command number NBD does not define} (all answered with EINVAL) */
    public long unknownCommands() { return commands[COMMANDS].calls(); }

    /** {@return the connections accepted so far} */
    public long connections() { return connections.sum(); }

    /**
     * {@return the times a client that completed its handshake was refused entry to transmission because
     * {@link NbdServer.Builder#maxConnections} connections were in it}
     */
    public long rejectedConnections() { return rejectedConnections.sum(); }

    /** {@return the connections dropped for breaking the protocol (bad magic, unknown flags or exports)} */
    public long protocolErrors() { return protocolErrors.sum(); }

    /** {@return the connections dropped because their handshake did not finish in time} */
    public long handshakeTimeouts() { return handshakeTimeouts.sum(); }

    /** {@return the connections dropped in the handshake to make room for newer ones ({@link NbdServer.Builder#maxHandshakes})} */
    public long droppedHandshakes() { return droppedHandshakes.sum(); }

    /** {@return the connections closed by the idle timeout ({@link NbdServer.Builder#idleTimeout})} */
    public long idleTimeouts() { return idleTimeouts.sum(); }

    /** {@return the connections cut by the reply timeout ({@link NbdServer.Builder#replyTimeout})} */
    public long replyTimeouts() { return replyTimeouts.sum(); }

    /**
     * {@return the clients kept out by the allow-lists: address ({@link NbdServer.Builder#allow}), user
     * ({@link NbdServer.Builder#allowUsers}) or TLS certificate subject ({@link NbdServer.Builder#tlsAuthz})}
     */
    public long accessRefusals() { return accessRefusals.sum(); }

    /** {@return the handshakes that ended with the client in transmission (GO or EXPORT_NAME accepted)} */
    public long handshakes() { return handshakes.sum(); }

    /**
     * {@return what clients asked of an export, or null when no request has reached it yet}
     *
     * @param name the export's name
     */
    public ExportStats export(String name) { return exports.get(name); }

    /** {@return the counts of every export that requests have reached, by name in name order} */
    public java.util.SortedMap<String, ExportStats> exports() { return new java.util.TreeMap<>(exports); }

    /** {@return the most requests read and not yet answered at one time, over all connections} */
    public int mostInFlight() { return mostInFlight.get(); }

    /** {@return the requests read and not yet answered now, over all connections} */
    public int requestsInFlight() { return inFlight.get(); }

    /**
     * {@return the bytes of the server-wide in-flight budget ({@link NbdServer.Builder#maxInflightBytes}) that
     * requests hold now}: each READ or WRITE holds what its payload buffers occupy from the moment it is read until
     * its reply has gone out, and each BLOCK_STATUS 16 KiB for its list of at most 256 runs
     */
    public long inflightBytesInUse() {
        ServerContext context = engine;
        return context == null ? 0 : context.budget().used();
    }

    /** {@return the payload buffers that requests hold now, handed out by the pool and not given back} */
    public int payloadBuffersOutstanding() {
        ServerContext context = engine;
        return context == null ? 0 : context.buffers().outstanding();
    }

    /** {@return the free payload buffers the pool keeps for the next requests} (at most the in-flight budget's worth) */
    public int payloadBuffersPooled() {
        ServerContext context = engine;
        return context == null ? 0 : context.buffers().pooled();
    }

    /** {@return the bytes of payload buffers held by requests in flight now} */
    public long payloadBytesHeld() { return payloadBytesHeld.get(); }

    /** {@return the most bytes of payload buffers that requests held at once: at most the in-flight budget} */
    public long peakPayloadBytesHeld() { return peakPayloadBytesHeld.get(); }

    /** {@return the seconds since the server started} */
    public double elapsedSeconds() { return (System.nanoTime() - startNanos) / 1e9; }

    /**
     * {@return the requests as the stats filter reports its calls, in the same fields and format}: the elapsed time,
     * then per command used, the requests (calls), the bytes of those that succeeded, the errors, the mean and longest
     * time from reading a request to answering it, the rate, and the breakdown of sizes and alignment; the flush the
     * server made of its exports as it stopped comes after FLUSH, as {@code flush at shutdown}
     */
    public String format() {
        double seconds = elapsedSeconds();
        StringBuilder text = new StringBuilder(OperationCounter.elapsedLine(seconds));
        int[] order = {Protocol.CMD_READ, Protocol.CMD_WRITE, Protocol.CMD_WRITE_ZEROES, Protocol.CMD_TRIM,
                Protocol.CMD_FLUSH, -1, Protocol.CMD_BLOCK_STATUS, Protocol.CMD_CACHE, Protocol.CMD_DISC, COMMANDS};
        for (int command : order) {
            if (command < 0) {
                shutdownFlush.appendTo(text, OperationCounter.SHUTDOWN_FLUSH, seconds);
            } else {
                commands[command].appendTo(text, command == COMMANDS ? "unknown" : name(command), seconds);
            }
        }
        return text.toString();
    }

    /**
     * Prints a human-readable report: {@link #format()}, then the connections and the payload buffers.
     *
     * @param out where to print it
     */
    public void print(PrintStream out) {
        out.print(format());
        out.printf(Locale.ROOT, "connections: %d (%d refused, %d handshake timeouts, %d dropped in the handshake, "
                + "%d idle timeouts, %d reply timeouts), protocol errors: %d, most requests in flight: %d%n",
                connections(), rejectedConnections(), handshakeTimeouts(), droppedHandshakes(), idleTimeouts(),
                replyTimeouts(), protocolErrors(), mostInFlight());
        out.printf(Locale.ROOT, "payload buffers: at most %d bytes held at once; now %d buffers held, %d pooled, "
                + "%d bytes of the in-flight budget in use%n", peakPayloadBytesHeld(), payloadBuffersOutstanding(),
                payloadBuffersPooled(), inflightBytesInUse());
    }

    /**
     * {@return a one-line summary for logs}: elapsed time, connections, requests with their errors, bytes read and
     * written, requests in flight now and at most
     */
    @Override
    public String toString() {
        long requests = 0;
        long failed = 0;
        for (OperationCounter c : commands) {
            requests += c.calls();
            failed += c.errors();
        }
        return String.format(Locale.ROOT, "ServerStats[elapsed=%.3fs connections=%d requests=%d errors=%d read=%d "
                        + "written=%d inFlight=%d mostInFlight=%d]", elapsedSeconds(), connections(), requests, failed,
                commands[Protocol.CMD_READ].bytes(), commands[Protocol.CMD_WRITE].bytes(), requestsInFlight(),
                mostInFlight());
    }
}

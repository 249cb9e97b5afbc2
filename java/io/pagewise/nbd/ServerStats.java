package io.pagewise.nbd;

import io.pagewise.nbd.wire.Protocol;
import java.io.PrintStream;
import java.util.Locale;
import java.util.concurrent.atomic.LongAdder;

/** Counts of what a server did: per command, requests, bytes and errors; plus connections. */
public final class ServerStats {
    private static final int COMMANDS = Protocol.CMD_BLOCK_STATUS + 1;

    private final long startNanos = System.nanoTime();
    private final LongAdder[] ops = adders();
    private final LongAdder[] bytes = adders();
    private final LongAdder[] errors = adders();
    private final LongAdder connections = new LongAdder();
    private final LongAdder rejectedConnections = new LongAdder();
    private final LongAdder protocolErrors = new LongAdder();
    private final LongAdder handshakeTimeouts = new LongAdder();

    private static LongAdder[] adders() {
        LongAdder[] adders = new LongAdder[COMMANDS + 1];
        for (int i = 0; i < adders.length; i++) adders[i] = new LongAdder();
        return adders;
    }

    private static int index(int command) {
        return command >= 0 && command < COMMANDS ? command : COMMANDS;
    }

    void request(int command, long length, boolean failed) {
        int i = index(command);
        ops[i].increment();
        if (!failed) {
            if (command == Protocol.CMD_READ || command == Protocol.CMD_WRITE || command == Protocol.CMD_TRIM
                    || command == Protocol.CMD_WRITE_ZEROES || command == Protocol.CMD_CACHE) {
                bytes[i].add(length);
            }
        } else {
            errors[i].increment();
        }
    }

    void connectionAccepted() { connections.increment(); }

    void connectionRejected() { rejectedConnections.increment(); }

    void protocolError() { protocolErrors.increment(); }

    void handshakeTimedOut() { handshakeTimeouts.increment(); }

    public long ops(String command) { return ops[index(code(command))].sum(); }

    public long bytes(String command) { return bytes[index(code(command))].sum(); }

    public long errors(String command) { return errors[index(code(command))].sum(); }

    public long connections() { return connections.sum(); }

    public long rejectedConnections() { return rejectedConnections.sum(); }

    public long protocolErrors() { return protocolErrors.sum(); }

    /** Connections dropped because their handshake did not finish in time. */
    public long handshakeTimeouts() { return handshakeTimeouts.sum(); }

    public double elapsedSeconds() { return (System.nanoTime() - startNanos) / 1e9; }

    private static int code(String command) {
        for (int i = 0; i < COMMANDS; i++) {
            if (Protocol.commandName(i).equalsIgnoreCase(command)) return i;
        }
        return COMMANDS;
    }

    /** A human-readable report: elapsed time, then one line per command used. */
    public void print(PrintStream out) {
        double seconds = elapsedSeconds();
        out.printf(Locale.ROOT, "elapsed: %.3f s, connections: %d (%d refused, %d handshake timeouts), protocol errors: %d%n",
                seconds, connections(), rejectedConnections(), handshakeTimeouts(), protocolErrors());
        out.printf(Locale.ROOT, "%-13s %10s %14s %12s %8s%n", "command", "ops", "bytes", "MiB/s", "errors");
        for (int i = 0; i <= COMMANDS; i++) {
            long n = ops[i].sum();
            if (n == 0) continue;
            long b = bytes[i].sum();
            out.printf(Locale.ROOT, "%-13s %10d %14d %12.1f %8d%n", i == COMMANDS ? "unknown" : Protocol.commandName(i),
                    n, b, seconds > 0 ? b / seconds / (1 << 20) : 0.0, errors[i].sum());
        }
    }
}

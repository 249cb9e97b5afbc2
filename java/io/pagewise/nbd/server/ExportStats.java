package io.pagewise.nbd.server;

import io.pagewise.nbd.NbdCommand;
import io.pagewise.nbd.wire.Protocol;
import java.util.concurrent.atomic.LongAdder;

/**
 * What clients of one export asked of it: per command, requests, bytes moved, errors and a latency histogram
 * ({@link ServerStats#export(String)}). Requests with a command number NBD does not define are counted by the server
 * only ({@link ServerStats#unknownCommands()}).
 */
public final class ExportStats {
    private static final int COMMANDS = Protocol.CMD_BLOCK_STATUS + 1;

    private final String name;
    private final LongAdder[] ops = new LongAdder[COMMANDS];
    private final LongAdder[] bytes = new LongAdder[COMMANDS];
    private final LongAdder[] errors = new LongAdder[COMMANDS];
    private final LatencyHistogram[] latency = new LatencyHistogram[COMMANDS];

    ExportStats(String name) {
        this.name = name;
        for (int i = 0; i < COMMANDS; i++) {
            ops[i] = new LongAdder();
            bytes[i] = new LongAdder();
            errors[i] = new LongAdder();
            latency[i] = new LatencyHistogram();
        }
    }

    void request(int command, long length, boolean failed, long nanos) {
        if (command < 0 || command >= COMMANDS) return;
        ops[command].increment();
        if (failed) errors[command].increment();
        else if (ServerStats.movesBytes(command)) bytes[command].add(length);
        latency[command].record(nanos);
    }

    /** {@return the export's name} */
    public String name() { return name; }

    /**
     * {@return the requests of a command so far, failed ones included}
     *
     * @param command the command
     */
    public long ops(NbdCommand command) { return ops[command.code()].sum(); }

    /**
     * {@return the bytes moved by successful requests of a command} (READ, WRITE, TRIM, WRITE_ZEROES, CACHE; 0 for others)
     *
     * @param command the command
     */
    public long bytes(NbdCommand command) { return bytes[command.code()].sum(); }

    /**
     * {@return the requests of a command answered with an error}
     *
     * @param command the command
     */
    public long errors(NbdCommand command) { return errors[command.code()].sum(); }

    /**
     * {@return how long the requests of a command took, from being read to their reply being ready}
     *
     * @param command the command
     */
    public LatencyHistogram latency(NbdCommand command) { return latency[command.code()]; }
}

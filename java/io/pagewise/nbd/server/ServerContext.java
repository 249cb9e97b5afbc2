package io.pagewise.nbd.server;

import java.util.function.Consumer;

/**
 * What every connection of one server shares; connectionInflightBytes is each connection's cap within budget, and
 * threadsPerConnection how many requests of one connection run at once. A request holds at most payloadPiece bytes
 * of payload at a time (what fits in a connection's cap): longer READs and WRITEs are served piece by piece.
 */
public record ServerContext(int threadsPerConnection, ByteBudget budget, long connectionInflightBytes, PayloadBuffers buffers,
                     RequestStats stats, Consumer<String> log, boolean verbose, int maxPayload, int payloadPiece) {}

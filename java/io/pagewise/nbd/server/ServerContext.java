package io.pagewise.nbd.server;

import java.util.function.Consumer;

/**
 * What every connection of one server shares; connectionInflightBytes is each connection's cap within budget, and
 * threadsPerConnection how many requests of one connection run at once.
 */
public record ServerContext(int threadsPerConnection, ByteBudget budget, long connectionInflightBytes, PayloadBuffers buffers,
                     RequestStats stats, Consumer<String> log, boolean verbose, int maxPayload) {}

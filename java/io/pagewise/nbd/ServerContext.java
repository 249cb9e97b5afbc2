package io.pagewise.nbd;

import java.util.concurrent.Executor;
import java.util.function.Consumer;

/** What every connection of one server shares; connectionInflightBytes is each connection's cap within budget. */
record ServerContext(Executor workers, ByteBudget budget, long connectionInflightBytes, PayloadBuffers buffers,
                     ServerStats stats, Consumer<String> log, boolean verbose, int maxPayload) {}

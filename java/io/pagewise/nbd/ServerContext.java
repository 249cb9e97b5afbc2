package io.pagewise.nbd;

import java.util.concurrent.Executor;
import java.util.function.Consumer;

/** What every connection of one server shares. */
record ServerContext(Executor workers, ByteBudget budget, PayloadBuffers buffers, ServerStats stats,
                     Consumer<String> log, boolean verbose, int maxPayload) {}

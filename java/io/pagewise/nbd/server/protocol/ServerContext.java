package io.pagewise.nbd.server.protocol;

import io.pagewise.nbd.server.metrics.RequestStats;


/**
 * What every connection of one server shares; connectionInflightBytes is each connection's cap within budget, and
 * threadsPerConnection how many requests of one connection run at once. A request holds at most payloadPiece bytes
 * of payload at a time (what fits in a connection's cap): longer READs and WRITEs are served piece by piece. log is
 * the server's logger (the levels are listed on {@link io.pagewise.nbd.server.NbdServer}).
 */
public record ServerContext(int threadsPerConnection, ByteBudget budget, long connectionInflightBytes,
                            PayloadBuffers buffers, RequestStats stats, System.Logger log, int maxPayload, int payloadPiece,
                            LogThrottle requestLog) {
    /** With a throttle of its own for the WARNING lines of failed and refused requests. */
    public ServerContext(int threadsPerConnection, ByteBudget budget, long connectionInflightBytes,
                         PayloadBuffers buffers, RequestStats stats, System.Logger log, int maxPayload, int payloadPiece) {
        this(threadsPerConnection, budget, connectionInflightBytes, buffers, stats, log, maxPayload, payloadPiece,
                new LogThrottle("failed or refused requests"));
    }
}

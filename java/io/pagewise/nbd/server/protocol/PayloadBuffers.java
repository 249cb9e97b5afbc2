package io.pagewise.nbd.server.protocol;

import io.pagewise.internal.BufferPool;
import io.pagewise.nbd.server.metrics.RequestStats;
import java.nio.ByteBuffer;
import java.util.concurrent.LinkedBlockingDeque;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Reusable page-aligned direct buffers for request payloads in two sizes: 64 KiB for small requests and 256 KiB
 * pieces for large ones. 256 KiB is nbdcopy's request size, so such a request is charged what it really holds
 * (with 1 MiB pieces it was charged 4x, which cut the requests a connection may have in flight to a quarter).
 * The free lists hold at most the in-flight budget's worth, so memory stays bounded. They are stacks: the buffer
 * handed out next is the one given back last, still in cache (a queue cycled through every buffer in the pool).
 */
public final class PayloadBuffers {
    public static final int SMALL = 64 * 1024;
    static final int LARGE = 256 * 1024;

    private final LinkedBlockingDeque<ByteBuffer> small;
    private final LinkedBlockingDeque<ByteBuffer> large;
    private final RequestStats stats;
    /** Buffers handed to requests and not given back yet. */
    private final AtomicInteger outstanding = new AtomicInteger();

    public PayloadBuffers(long budget, RequestStats stats) {
        small = new LinkedBlockingDeque<>((int) Math.max(16, Math.min(4096, budget / SMALL)));
        large = new LinkedBlockingDeque<>((int) Math.max(4, Math.min(4096, budget / LARGE)));
        this.stats = stats;
    }

    /** Bytes of buffer that a payload of length occupies (what the budget is charged). */
    static long footprint(long length) {
        if (length <= SMALL) return SMALL;
        return (length + LARGE - 1) / LARGE * LARGE;
    }

    /** The longest payload, at most max, whose buffers fit in bytes (which is at least {@link #SMALL}). */
    public static int longestWithin(long bytes, int max) {
        return bytes < LARGE ? SMALL : (int) Math.min(max, bytes / LARGE * LARGE);
    }

    /**
     * Fills pieces[0..n) with buffers that together hold length bytes; returns n.
     *
     * @throws OutOfDirectMemory when the JVM has no direct memory left for them (none are kept then)
     */
    int take(long length, ByteBuffer[] pieces) throws OutOfDirectMemory {
        int n = 0;
        try {
            if (length <= SMALL) {
                pieces[n++] = get(small, SMALL).limit((int) length);
            } else {
                for (long left = length; left > 0; left -= LARGE) {
                    pieces[n++] = get(large, LARGE).limit((int) Math.min(LARGE, left));
                }
            }
        } catch (OutOfMemoryError e) {
            for (int i = 0; i < n; i++) {
                (pieces[i].capacity() == SMALL ? small : large).offerFirst(pieces[i]);
                pieces[i] = null;
            }
            throw new OutOfDirectMemory("no direct memory left for a request's " + length + " payload bytes ("
                    + e.getMessage() + "): lower --max-inflight-bytes or raise -XX:MaxDirectMemorySize", e);
        }
        stats.payloadBuffersTaken(footprint(length));
        outstanding.addAndGet(n);
        return n;
    }

    /** The JVM's direct memory ran out while a request was being received: its connection cannot go on. */
    public static final class OutOfDirectMemory extends java.io.IOException {
        private static final long serialVersionUID = 1L;

        public OutOfDirectMemory(String message, Throwable cause) {
            super(message, cause);
        }
    }

    void give(ByteBuffer[] pieces, int n) {
        long bytes = 0;
        for (int i = 0; i < n; i++) {
            ByteBuffer piece = pieces[i];
            bytes += piece.capacity();
            (piece.capacity() == SMALL ? small : large).offerFirst(piece);
            pieces[i] = null;
        }
        outstanding.addAndGet(-n);
        stats.payloadBuffersGiven(bytes);
    }

    /** Buffers handed to requests by {@link #take} and not yet given back: 0 whenever no request is in flight. */
    public int outstanding() {
        return outstanding.get();
    }

    /** Free buffers waiting in the pool for the next request. */
    public int pooled() {
        return small.size() + large.size();
    }

    private static ByteBuffer get(LinkedBlockingDeque<ByteBuffer> free, int size) {
        ByteBuffer buffer = free.pollFirst();
        if (buffer == null) buffer = BufferPool.aligned(size);
        return buffer.clear();
    }
}

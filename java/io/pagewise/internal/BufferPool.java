package io.pagewise.internal;

import java.nio.ByteBuffer;
import java.util.concurrent.ArrayBlockingQueue;

/**
 * Reusable page-aligned direct buffers: bounce buffers for heap buffers and for unaligned O_DIRECT requests.
 * When the pool is empty a new buffer is made; buffers beyond the pool's capacity are left to the GC.
 */
public final class BufferPool {
    public static final int BUFFER_SIZE = 1 << 20;
    public static final int ALIGNMENT = 4096;
    private static final BufferPool SHARED = new BufferPool(2 * Runtime.getRuntime().availableProcessors() + 8);

    /** Requests up to this size bounce through a buffer of the calling thread's own, without touching the pool. */
    public static final int SMALL_SIZE = 64 << 10;
    private static final ThreadLocal<ByteBuffer> SMALL = ThreadLocal.withInitial(() -> aligned(SMALL_SIZE));

    private final ArrayBlockingQueue<ByteBuffer> free;

    private BufferPool(int capacity) {
        free = new ArrayBlockingQueue<>(capacity);
    }

    public static BufferPool shared() {
        return SHARED;
    }

    /** A cleared buffer of {@link #BUFFER_SIZE} bytes aligned to {@link #ALIGNMENT}. */
    public ByteBuffer take() {
        ByteBuffer buffer = free.poll();
        if (buffer == null) buffer = aligned(BUFFER_SIZE);
        return buffer.clear();
    }

    /**
     * The calling thread's own cleared buffer of {@link #SMALL_SIZE} bytes aligned to {@link #ALIGNMENT}: for a
     * bounce that ends before the thread uses it again (small heap-buffer requests, where the pool's lock would cost
     * as much as the copy). Not given back.
     */
    public static ByteBuffer small() {
        return SMALL.get().clear();
    }

    private static final ThreadLocal<ByteBuffer> POLICY_SMALL = ThreadLocal.withInitial(() -> aligned(SMALL_SIZE));

    /**
     * A bounce buffer of a cache policy, for a span of at most {@link #SMALL_SIZE}: the thread's own, as
     * {@link #small()}, but another one, since the policy hands its bounce to a raw file that may bounce through
     * {@link #small()} itself. Not given back.
     */
    public static ByteBuffer policySmall() {
        return POLICY_SMALL.get().clear();
    }

    /** Buffers of at least this size come from {@link HugePageSlabs} where it can: a large O_DIRECT request's size. */
    public static final int HUGE_PAGE_MIN = 256 << 10;

    /**
     * A new direct buffer of exactly size bytes whose address is a multiple of {@link #ALIGNMENT}; from
     * {@link #HUGE_PAGE_MIN} up, in transparent huge pages where the kernel gives them.
     */
    public static ByteBuffer aligned(int size) {
        if (size >= HUGE_PAGE_MIN) {
            ByteBuffer contiguous = HugePageSlabs.take(size);
            if (contiguous != null) return contiguous;
        }
        // alignedSlice also rounds the end down to a multiple, so whole units must fit after the aligned start.
        int whole = (size + ALIGNMENT - 1) / ALIGNMENT * ALIGNMENT;
        return ByteBuffer.allocateDirect(whole + ALIGNMENT).alignedSlice(ALIGNMENT).slice(0, size);
    }

    public void give(ByteBuffer buffer) {
        free.offer(buffer);
    }
}

package io.pagewise.internal;

import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.Map;

/**
 * I/O buffers carved from {@link Memory#HUGE_PAGE}-aligned memory advised for transparent huge pages: where the kernel
 * gives one, a buffer lies in physically contiguous memory, and an O_DIRECT request from it reaches the device as
 * one segment instead of one per 4 KiB page. A virtio disk without indirect descriptors has room for about 256
 * segments in flight, so a 256 KiB request from scattered pages took a quarter of it and a 1 MiB one all of it, and
 * each completion then restarted the stopped queue from a kernel worker thread.
 *
 * <p>Buffers smaller than a huge page share one, a slab per size; the slab is unmapped once none of its buffers is
 * reachable. Without the native library (or before {@code io.pagewise.Native} has loaded it), or with
 * {@code -Dpagewise.huge-page-buffers=false}, there are none.
 */
final class HugePageSlabs {
    private static final boolean ENABLED = !"false".equals(System.getProperty("pagewise.huge-page-buffers"));
    /** Per rounded buffer size, the slab the next buffer of that size is cut from; a full slab leaves the map. */
    private static final Map<Integer, Slab> OPEN = new HashMap<>();

    private static final class Slab {
        final ByteBuffer memory;
        int next;

        Slab(ByteBuffer memory) {
            this.memory = memory;
        }
    }

    private HugePageSlabs() {}

    static boolean enabled() {
        return ENABLED && Memory.canMap();
    }

    /**
     * A cleared direct buffer of exactly size bytes starting on a {@link BufferPool#ALIGNMENT} boundary, or null when
     * none can be had (disabled, no native library, or no memory to map).
     */
    static synchronized ByteBuffer take(int size) {
        if (size <= 0 || !enabled()) return null;
        long rounded = ((long) size + BufferPool.ALIGNMENT - 1) / BufferPool.ALIGNMENT * BufferPool.ALIGNMENT;
        if (rounded > Memory.HUGE_PAGE / 2) {
            long whole = (rounded + Memory.HUGE_PAGE - 1) / Memory.HUGE_PAGE * Memory.HUGE_PAGE;
            if (whole > Integer.MAX_VALUE) return null;
            ByteBuffer own = Memory.hugePageBuffer((int) whole);
            return own == null ? null : own.slice(0, size);
        }
        int unit = (int) rounded;
        Slab slab = OPEN.get(unit);
        if (slab == null) {
            ByteBuffer memory = Memory.hugePageBuffer(Memory.HUGE_PAGE);
            if (memory == null) return null;
            slab = new Slab(memory);
            OPEN.put(unit, slab);
        }
        ByteBuffer buffer = slab.memory.slice(slab.next, size);
        slab.next += unit;
        if (slab.next + unit > Memory.HUGE_PAGE) OPEN.remove(unit);
        return buffer;
    }
}

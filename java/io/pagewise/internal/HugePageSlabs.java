package io.pagewise.internal;

import java.nio.ByteBuffer;

/**
 * I/O buffers carved from {@link Memory#HUGE_PAGE}-aligned memory advised for transparent huge pages: where the kernel
 * gives one, a buffer lies in physically contiguous memory, and an O_DIRECT request from it reaches the device as
 * one segment instead of one per 4 KiB page. A virtio disk without indirect descriptors has room for about 256
 * segments in flight, so a 256 KiB request from scattered pages took a quarter of it and a 1 MiB one all of it, and
 * each completion then restarted the stopped queue from a kernel worker thread.
 *
 * <p>Buffers of up to half a huge page are cut one after another from the open slab, whatever their sizes, so that a
 * program that asks for many sizes holds one slab open, not one per size; the slab is unmapped once none of its
 * buffers is reachable. Without the native library (or before {@code io.pagewise.Native} has loaded it), or with
 * {@code -Dpagewise.huge-page-buffers=false}, there are none.
 */
final class HugePageSlabs {
    private static final boolean ENABLED = !"false".equals(System.getProperty("pagewise.huge-page-buffers"));
    /** The huge page the next small buffer is cut from, and where in it; a buffer that does not fit opens the next. */
    private static ByteBuffer open;
    private static int next;

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
        if (open == null || next + rounded > Memory.HUGE_PAGE) {
            ByteBuffer memory = Memory.hugePageBuffer(Memory.HUGE_PAGE);
            if (memory == null) return null;
            open = memory;
            next = 0;
        }
        ByteBuffer buffer = open.slice(next, size);
        next += (int) rounded;
        return buffer;
    }
}

package io.pagewise.internal;

import java.nio.ByteBuffer;

/**
 * Anonymous memory for I/O buffers, aligned to 2 MiB and advised for transparent huge pages: the topic's one Java
 * home, for every JDK. {@link MemoryBinding} makes the calls, by JNI into {@code native/memory.c} or on JDK 22+ by
 * FFM. Nothing maps before {@code io.pagewise.Native} has said the calls loaded ({@link #canMap}).
 */
public final class Memory {
    /** The transparent huge page size on x86_64 and on arm64 with 4 KiB pages, and the unit mapped here. */
    public static final int HUGE_PAGE = 2 << 20;

    /** Set once the native calls are loaded ({@code io.pagewise.Native} does), so this layer need not ask it. */
    private static volatile boolean loaded;

    private Memory() {}

    /** Called by {@code io.pagewise.Native} when the native calls have loaded. */
    public static void nativeCallsLoaded() {
        loaded = true;
    }

    /** Whether the native calls have loaded: else {@link #hugePageBuffer} must not be called. */
    static boolean canMap() {
        return loaded;
    }

    /**
     * A direct buffer over size new bytes, a multiple of {@link #HUGE_PAGE}, at an address that is one too, advised
     * MADV_HUGEPAGE, and faulted in; unmapped once neither it nor any buffer sliced from it is reachable.
     *
     * @return the buffer, or null when the memory could not be mapped
     */
    static ByteBuffer hugePageBuffer(int size) {
        if (size <= 0 || size % HUGE_PAGE != 0) throw new IllegalArgumentException("huge-page buffer of " + size
                + " bytes: must be a positive multiple of " + HUGE_PAGE);
        ByteBuffer buffer = MemoryBinding.map(size);
        if (buffer == null) return null;
        // Faulted in now, as allocateDirect's zeroing does: btrfs reads an O_DIRECT request into memory that was never
        // touched through the page cache instead, and leaves it cached there.
        for (int at = 0; at < size; at += 4096) buffer.put(at, (byte) 0);
        return buffer;
    }
}

package io.pagewise.internal;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.nio.ByteBuffer;

/** {@link Memory}'s calls by FFM (JDK 22+), the twin of the JNI binding with its methods. */
final class MemoryBinding {
    private static final int PROT_READ_WRITE = 0x1 | 0x2;
    private static final int MAP_PRIVATE_ANONYMOUS = 0x02 | 0x20;
    private static final int MADV_HUGEPAGE = 14;

    private static final MethodHandle MMAP = Ffm.function("mmap",
            FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_LONG));
    private static final MethodHandle MUNMAP = Ffm.function("munmap",
            FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG));
    private static final MethodHandle MADVISE = Ffm.function("madvise",
            FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_INT));

    private MemoryBinding() {}

    /** size bytes mapped as {@link Memory#hugePageBuffer} says, or null when mmap failed. */
    static ByteBuffer map(int size) {
        long span = (long) size + Memory.HUGE_PAGE;
        long mapped = Ffm.once("mmap", state -> (long) MMAP.invokeExact(state, 0L, span, PROT_READ_WRITE,
                MAP_PRIVATE_ANONYMOUS, -1, 0L));
        if (mapped < 0) return null;
        long start = (mapped + Memory.HUGE_PAGE - 1) & -(long) Memory.HUGE_PAGE;
        long end = start + size;
        if (start > mapped) unmap(mapped, start - mapped);
        if (mapped + span > end) unmap(end, mapped + span - end);
        // Fails only where the kernel has no transparent huge pages: the memory is then ordinary pages.
        Ffm.once("madvise", state -> (int) MADVISE.invokeExact(state, start, (long) size, MADV_HUGEPAGE));
        // Buffers of a segment in an automatic arena, and their slices, keep it reachable: unmapped after the last.
        return MemorySegment.ofAddress(start).reinterpret(size, Arena.ofAuto(), segment -> unmap(start, size))
                .asByteBuffer();
    }

    private static void unmap(long address, long length) {
        Ffm.once("munmap", state -> (int) MUNMAP.invokeExact(state, address, length));
    }
}

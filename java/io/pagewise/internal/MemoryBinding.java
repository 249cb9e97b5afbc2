package io.pagewise.internal;

import java.lang.ref.Cleaner;
import java.nio.ByteBuffer;

/** {@link Memory}'s calls by JNI, into {@code native/memory.c}; the FFM twin (JDK 22+) has the same methods. */
final class MemoryBinding {
    private static final Cleaner UNMAPPER = Cleaner.create(runnable -> AsyncIo.daemon(runnable, "pagewise-unmapper"));

    private MemoryBinding() {}

    /** size bytes mapped as {@link Memory#hugePageBuffer} says, or null when mmap failed. */
    static ByteBuffer map(int size) {
        long address = map0(size);
        if (address < 0) return null;
        ByteBuffer buffer = wrap0(address, size);
        if (buffer == null) {
            unmap0(address, size);
            return null;
        }
        // A slice of a buffer made by JNI refers to it, so the memory outlives every slice.
        UNMAPPER.register(buffer, () -> unmap0(address, size));
        return buffer;
    }

    private static native long map0(long size);

    private static native int unmap0(long address, long size);

    private static native ByteBuffer wrap0(long address, int size);
}

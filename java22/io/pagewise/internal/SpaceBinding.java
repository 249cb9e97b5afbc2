package io.pagewise.internal;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.FunctionDescriptor;
import java.lang.invoke.MethodHandle;

/**
 * {@link Space}'s calls by FFM (JDK 22+), the twin of the JNI binding with its methods. Space has checked the
 * arguments.
 */
final class SpaceBinding {
    private static final int FALLOC_FL_KEEP_SIZE = 0x01;
    private static final int FALLOC_FL_PUNCH_HOLE = 0x02;
    private static final int FALLOC_FL_ZERO_RANGE = 0x10;
    private static final int NATIVE_SEEK_DATA = 3;
    private static final int NATIVE_SEEK_HOLE = 4;

    private static final MethodHandle FALLOCATE = Ffm.function("fallocate",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_LONG, JAVA_LONG));
    private static final MethodHandle LSEEK = Ffm.function("lseek",
            FunctionDescriptor.of(JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_INT));

    private SpaceBinding() {}

    /** @return 0 or -errno */
    static int fallocate(int fd, int mode, long offset, long length) {
        int nativeMode = switch (mode) {
            case Space.PUNCH_HOLE -> FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE;
            case Space.ZERO_RANGE -> FALLOC_FL_ZERO_RANGE;
            default -> 0; // Space.ALLOCATE
        };
        return (int) Ffm.retried("fallocate", state -> (int) FALLOCATE.invokeExact(state, fd, nativeMode, offset, length));
    }

    /** @return the offset found, or -errno (-ENXIO when there is no more data or hole) */
    static long seek(int fd, long offset, int whence) {
        int nativeWhence = whence == Space.SEEK_DATA ? NATIVE_SEEK_DATA : NATIVE_SEEK_HOLE;
        return Ffm.once("lseek", state -> (long) LSEEK.invokeExact(state, fd, offset, nativeWhence));
    }
}

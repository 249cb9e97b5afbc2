package io.pagewise.internal;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.FunctionDescriptor;
import java.lang.invoke.MethodHandle;

/**
 * The FFM version (JDK 22+) of the class that pairs with {@code native/space.c}, with its API and contract: fallocate
 * and SEEK_DATA/SEEK_HOLE.
 */
public final class Space {
    /** FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE */
    public static final int PUNCH_HOLE = 1;
    /** FALLOC_FL_ZERO_RANGE */
    public static final int ZERO_RANGE = 2;

    public static final int SEEK_DATA = 0;
    public static final int SEEK_HOLE = 1;

    private static final int FALLOC_FL_KEEP_SIZE = 0x01;
    private static final int FALLOC_FL_PUNCH_HOLE = 0x02;
    private static final int FALLOC_FL_ZERO_RANGE = 0x10;
    private static final int NATIVE_SEEK_DATA = 3;
    private static final int NATIVE_SEEK_HOLE = 4;
    private static final int EINVAL = 22;

    private static final MethodHandle FALLOCATE = Ffm.function("fallocate",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_LONG, JAVA_LONG));
    private static final MethodHandle LSEEK = Ffm.function("lseek",
            FunctionDescriptor.of(JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_INT));

    private Space() {}

    /** @return 0 or -errno */
    static int fallocate(int fd, int mode, long offset, long length) {
        if (mode != PUNCH_HOLE && mode != ZERO_RANGE) throw new IllegalArgumentException("unknown fallocate mode " + mode);
        if (offset < 0 || length <= 0) return -EINVAL;
        int nativeMode = mode == PUNCH_HOLE ? FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE : FALLOC_FL_ZERO_RANGE;
        return (int) Ffm.retried("fallocate", state -> (int) FALLOCATE.invokeExact(state, fd, nativeMode, offset, length));
    }

    /** @return the offset found, or -errno (-ENXIO when there is no more data or hole) */
    static long seek(int fd, long offset, int whence) {
        if (whence != SEEK_DATA && whence != SEEK_HOLE) throw new IllegalArgumentException("unknown whence " + whence);
        if (offset < 0) return -EINVAL;
        int nativeWhence = whence == SEEK_DATA ? NATIVE_SEEK_DATA : NATIVE_SEEK_HOLE;
        return Ffm.once("lseek", state -> (long) LSEEK.invokeExact(state, fd, offset, nativeWhence));
    }
}

package io.pagewise.internal;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.FunctionDescriptor;
import java.lang.invoke.MethodHandle;

/**
 * The FFM version (JDK 22+) of the class that pairs with {@code native/advice.c}, with its API and contract:
 * posix_fadvise, sync_file_range, fdatasync. They return 0 or {@code -errno}.
 */
public final class Advice {
    public static final int NORMAL = 0;
    public static final int SEQUENTIAL = 1;
    public static final int RANDOM = 2;
    public static final int NOREUSE = 3;
    public static final int WILLNEED = 4;
    public static final int DONTNEED = 5;

    public static final int SYNC_WAIT_BEFORE = 1;
    public static final int SYNC_WRITE = 2;
    public static final int SYNC_WAIT_AFTER = 4;

    /** POSIX_FADV_* of x86_64 and aarch64, indexed by the codes above. */
    private static final int[] NATIVE_ADVICE = {0, 2, 1, 5, 3, 4};
    private static final int EINVAL = 22;

    // posix_fadvise returns the error number and sets no errno.
    private static final MethodHandle FADVISE = Ffm.plainFunction("posix_fadvise",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_INT));
    private static final MethodHandle SYNC_FILE_RANGE = Ffm.function("sync_file_range",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_INT));
    private static final MethodHandle FDATASYNC = Ffm.function("fdatasync", FunctionDescriptor.of(JAVA_INT, JAVA_INT));

    private Advice() {}

    /** @param length 0 means to the end of the file */
    static int fadvise(int fd, long offset, long length, int advice) {
        if (advice < NORMAL || advice > DONTNEED) throw new IllegalArgumentException("unknown advice " + advice);
        if (offset < 0 || length < 0) return -EINVAL;
        while (true) {
            int rc;
            try {
                rc = (int) FADVISE.invokeExact(fd, offset, length, NATIVE_ADVICE[advice]);
            } catch (Throwable e) {
                throw Ffm.failed("posix_fadvise", e);
            }
            if (rc != Ffm.EINTR) return -rc;
        }
    }

    static int syncFileRange(int fd, long offset, long length, int flags) {
        if ((flags & ~(SYNC_WAIT_BEFORE | SYNC_WRITE | SYNC_WAIT_AFTER)) != 0) {
            throw new IllegalArgumentException("unknown sync_file_range flags 0x" + Integer.toHexString(flags));
        }
        if (offset < 0 || length < 0) return -EINVAL;
        return (int) Ffm.retried("sync_file_range",
                state -> (int) SYNC_FILE_RANGE.invokeExact(state, fd, offset, length, flags));
    }

    static int fdatasync(int fd) {
        return (int) Ffm.retried("fdatasync", state -> (int) FDATASYNC.invokeExact(state, fd));
    }
}

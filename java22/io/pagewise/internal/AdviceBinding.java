package io.pagewise.internal;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.FunctionDescriptor;
import java.lang.invoke.MethodHandle;

/**
 * {@link Advice}'s calls by FFM (JDK 22+), the twin of the JNI binding with its methods. Advice has checked the
 * arguments. They return 0 or {@code -errno}.
 */
final class AdviceBinding {
    /** POSIX_FADV_* of x86_64 and aarch64, indexed by Advice's codes. */
    private static final int[] NATIVE_ADVICE = {0, 2, 1, 5, 3, 4};

    // posix_fadvise returns the error number and sets no errno.
    private static final MethodHandle FADVISE = Ffm.plainFunction("posix_fadvise",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_INT));
    private static final MethodHandle SYNC_FILE_RANGE = Ffm.function("sync_file_range",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_INT));
    private static final MethodHandle FDATASYNC = Ffm.function("fdatasync", FunctionDescriptor.of(JAVA_INT, JAVA_INT));

    private AdviceBinding() {}

    static int fadvise(int fd, long offset, long length, int advice) {
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
        return (int) Ffm.retried("sync_file_range",
                state -> (int) SYNC_FILE_RANGE.invokeExact(state, fd, offset, length, flags));
    }

    static int fdatasync(int fd) {
        return (int) Ffm.retried("fdatasync", state -> (int) FDATASYNC.invokeExact(state, fd));
    }
}

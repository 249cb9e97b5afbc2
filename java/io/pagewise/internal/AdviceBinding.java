package io.pagewise.internal;

/** {@link Advice}'s calls by JNI, into {@code native/advice.c}; the FFM twin (JDK 22+) has the same methods. */
final class AdviceBinding {
    private AdviceBinding() {}

    static int fadvise(int fd, long offset, long length, int advice) {
        return fadvise0(fd, offset, length, advice);
    }

    static int syncFileRange(int fd, long offset, long length, int flags) {
        return syncFileRange0(fd, offset, length, flags);
    }

    static int fdatasync(int fd) {
        return fdatasync0(fd);
    }

    private static native int fadvise0(int fd, long offset, long length, int advice);

    private static native int syncFileRange0(int fd, long offset, long length, int flags);

    private static native int fdatasync0(int fd);
}

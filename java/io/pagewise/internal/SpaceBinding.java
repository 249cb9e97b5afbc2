package io.pagewise.internal;

/** {@link Space}'s calls by JNI, into {@code native/space.c}; the FFM twin (JDK 22+) has the same methods. */
final class SpaceBinding {
    private SpaceBinding() {}

    static int fallocate(int fd, int mode, long offset, long length) {
        return fallocate0(fd, mode, offset, length);
    }

    static long seek(int fd, long offset, int whence) {
        return seek0(fd, offset, whence);
    }

    private static native int fallocate0(int fd, int mode, long offset, long length);

    private static native long seek0(int fd, long offset, int whence);
}

package io.pagewise.internal;

/**
 * {@link FileDescriptors}' calls by JNI, into {@code native/file_descriptors.c}; the FFM twin (JDK 22+) has the same
 * methods. FileDescriptors has checked the arguments.
 */
final class FileDescriptorsBinding {
    private FileDescriptorsBinding() {}

    /** @param path native path bytes without a terminating NUL */
    static int open(byte[] path, int flags, int mode) {
        return open0(path, flags, mode);
    }

    static int close(int fd) {
        return close0(fd);
    }

    static int stat(int fd, long[] out) {
        return stat0(fd, out);
    }

    static int ftruncate(int fd, long length) {
        return ftruncate0(fd, length);
    }

    static boolean isTerminal(int fd) {
        return isTerminal0(fd) == 1;
    }

    static int directAlignment(int fd, int[] out) {
        return directAlignment0(fd, out);
    }

    static long fileSystemType(int fd) {
        return fileSystemType0(fd);
    }

    static int statusFlags(int fd) {
        return statusFlags0(fd);
    }

    private static native int open0(byte[] path, int flags, int mode);

    private static native int close0(int fd);

    private static native int stat0(int fd, long[] out);

    private static native int ftruncate0(int fd, long length);

    private static native int isTerminal0(int fd);

    private static native int directAlignment0(int fd, int[] out);

    private static native long fileSystemType0(int fd);

    private static native int statusFlags0(int fd);
}

package io.pagewise.internal;

/**
 * {@link Mincore}'s calls by JNI, into {@code native/mincore.c}; the FFM twin (JDK 22+) has the same methods.
 * Mincore has checked the arguments; an offset that is not page aligned is refused here, where the page size is
 * known.
 */
final class MincoreBinding {
    private MincoreBinding() {}

    static int pageSize() {
        return pageSize0();
    }

    static long[] syscallCounts() {
        long[] counts = new long[2];
        int rc = syscallCounts0(counts);
        if (rc < 0) throw new IllegalStateException("syscallCounts0 failed: " + Errno.name(-rc));
        return counts;
    }

    static long residentPages(int fd, long offset, long length) {
        return residentPages0(fd, offset, length);
    }

    static long cachedPages(int fd, long offset, long length) {
        return cachedPages0(fd, offset, length);
    }

    static int cacheStat(int fd, long offset, long length, long[] out) {
        return cacheStat0(fd, offset, length, out);
    }

    static int residentBitmap(int fd, long offset, long length, byte[] out) {
        return residentBitmap0(fd, offset, length, out);
    }

    private static native long residentPages0(int fd, long offset, long length);

    private static native int residentBitmap0(int fd, long offset, long length, byte[] out);

    private static native long cachedPages0(int fd, long offset, long length);

    private static native int cacheStat0(int fd, long offset, long length, long[] out);

    private static native int syscallCounts0(long[] out);

    private static native int pageSize0();
}

package io.pagewise.internal;

/**
 * Pairs with {@code native/mincore.c}: page-cache residency of file ranges. {@link #cachedPages} counts a whole range
 * with one cachestat(2) (Linux 6.5+); the mincore(2) calls map the range in bounded chunks and look at every page.
 */
public final class Mincore {
    /**
     * Whether to ask cachestat at all: the system property {@code pagewise.cachestat=false} turns it off, to measure
     * or test the mincore-only path that kernels before 6.5 take. Cleared for good when the kernel lacks it.
     */
    private static volatile boolean cachestat = !"false".equals(System.getProperty("pagewise.cachestat"));

    private Mincore() {}

    /** The system page size. */
    public static int pageSize() {
        return pageSize0();
    }

    /**
     * Turns the use of cachestat on or off for this JVM (tests force the mincore-only path with it); turning it on
     * has no effect on a kernel that lacks it.
     */
    public static void useCachestat(boolean use) {
        cachestat = use;
    }

    /** The mincore and cachestat system calls this library has made since it loaded, in that order. */
    public static long[] syscallCounts() {
        long[] counts = new long[2];
        int rc = syscallCounts0(counts);
        if (rc < 0) throw new IllegalStateException("syscallCounts0 failed: " + Errno.name(-rc));
        return counts;
    }

    /** @return resident pages in the range (offset page aligned) or -errno */
    static long residentPages(int fd, long offset, long length) {
        return residentPages0(fd, offset, length);
    }

    /**
     * Cached pages of [offset, offset + length) from one cachestat call; -ENOSYS when cachestat is not used (kernel
     * before 6.5, or turned off), or another -errno (-EPERM: a kernel that does not tell for this file).
     */
    static long cachedPages(int fd, long offset, long length) {
        if (!cachestat) return -Errno.ENOSYS;
        long pages = cachedPages0(fd, offset, length);
        if (pages == -Errno.ENOSYS) cachestat = false;
        return pages;
    }

    /**
     * Fills out[0..5) with the page-cache state of [offset, offset + length), length 0 meaning to the end of the
     * file, from one cachestat call: cached, dirty, under writeback, evicted, recently evicted pages; @return 0 or
     * -errno (-ENOSYS before Linux 6.5)
     */
    static int cacheStat(int fd, long offset, long length, long[] out) {
        if (out.length < 5) throw new IllegalArgumentException("cachestat fills 5 fields");
        return cacheStat0(fd, offset, length, out);
    }

    /** Sets bit i (byte i/8, bit i%8) of out when page i of the range is resident; @return 0 or -errno */
    static int residentBitmap(int fd, long offset, long length, byte[] out) {
        int page = pageSize();
        long pages = (length + page - 1) / page;
        if (out.length * 8L < pages) throw new IllegalArgumentException(out.length + " bytes cannot map " + pages + " pages");
        return residentBitmap0(fd, offset, length, out);
    }

    private static native long residentPages0(int fd, long offset, long length);

    private static native int residentBitmap0(int fd, long offset, long length, byte[] out);

    private static native long cachedPages0(int fd, long offset, long length);

    private static native int cacheStat0(int fd, long offset, long length, long[] out);

    private static native int syscallCounts0(long[] out);

    private static native int pageSize0();
}

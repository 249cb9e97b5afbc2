package io.pagewise.internal;

/**
 * Page-cache residency of file ranges: the topic's one Java home (whether cachestat is used, and the checks), for
 * every JDK. {@link MincoreBinding} makes the calls, by JNI into {@code native/mincore.c} or on JDK 22+ by FFM.
 * {@link #cachedPages} counts a whole range with one cachestat(2) (Linux 6.5+); the mincore(2) calls map the range
 * in bounded chunks and look at every page.
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
        return MincoreBinding.pageSize();
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
        return MincoreBinding.syscallCounts();
    }

    /** @return resident pages in the range (offset page aligned) or -errno */
    static long residentPages(int fd, long offset, long length) {
        if (offset < 0 || length < 0) return -Errno.EINVAL;
        return MincoreBinding.residentPages(fd, offset, length);
    }

    /**
     * Cached pages of [offset, offset + length) from one cachestat call; -ENOSYS when cachestat is not used (kernel
     * before 6.5, or turned off), or another -errno (-EPERM: a kernel that does not tell for this file).
     */
    static long cachedPages(int fd, long offset, long length) {
        if (!cachestat) return -Errno.ENOSYS;
        if (offset < 0 || length < 0) return -Errno.EINVAL;
        if (length == 0) return 0; // cachestat reads len 0 as "to the end of the file"
        long pages = MincoreBinding.cachedPages(fd, offset, length);
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
        if (offset < 0 || length < 0) return -Errno.EINVAL;
        return MincoreBinding.cacheStat(fd, offset, length, out);
    }

    /** Sets bit i (byte i/8, bit i%8) of out when page i of the range is resident; @return 0 or -errno */
    static int residentBitmap(int fd, long offset, long length, byte[] out) {
        int page = pageSize();
        long pages = (length + page - 1) / page;
        if (out.length * 8L < pages) throw new IllegalArgumentException(out.length + " bytes cannot map " + pages + " pages");
        if (offset < 0 || length < 0) return -Errno.EINVAL;
        return MincoreBinding.residentBitmap(fd, offset, length, out);
    }
}

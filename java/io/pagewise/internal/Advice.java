package io.pagewise.internal;

/**
 * Pairs with {@code native/advice.c}: posix_fadvise, sync_file_range, fdatasync. The calls take a
 * descriptor, so only this package makes them; they return 0 or {@code -errno}.
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

    private Advice() {}

    /** @param length 0 means to the end of the file */
    static int fadvise(int fd, long offset, long length, int advice) {
        if (advice < NORMAL || advice > DONTNEED) throw new IllegalArgumentException("unknown advice " + advice);
        return fadvise0(fd, offset, length, advice);
    }

    static int syncFileRange(int fd, long offset, long length, int flags) {
        if ((flags & ~(SYNC_WAIT_BEFORE | SYNC_WRITE | SYNC_WAIT_AFTER)) != 0) {
            throw new IllegalArgumentException("unknown sync_file_range flags 0x" + Integer.toHexString(flags));
        }
        return syncFileRange0(fd, offset, length, flags);
    }

    static int fdatasync(int fd) {
        return fdatasync0(fd);
    }

    private static native int fadvise0(int fd, long offset, long length, int advice);

    private static native int syncFileRange0(int fd, long offset, long length, int flags);

    private static native int fdatasync0(int fd);
}

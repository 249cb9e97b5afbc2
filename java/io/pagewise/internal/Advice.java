package io.pagewise.internal;

/** Pairs with {@code native/advice.c}: posix_fadvise, readahead, sync_file_range, fdatasync, fsync. */
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
    public static native int fadvise0(int fd, long offset, long length, int advice);

    public static native int readahead0(int fd, long offset, long length);

    public static native int syncFileRange0(int fd, long offset, long length, int flags);

    public static native int fdatasync0(int fd);

    public static native int fsync0(int fd);
}

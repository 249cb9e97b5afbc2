package io.pagewise.internal;

/** Pairs with {@code native/fd.c}: open, close, stat, truncate, O_DIRECT alignment. Results are {@code -errno} on failure. */
public final class FileDescriptors {
    public static final int READ_WRITE = 1;
    public static final int CREATE = 2;
    public static final int EXCLUSIVE = 4;
    public static final int TRUNCATE = 8;
    public static final int DIRECT = 16;
    public static final int DSYNC = 32;
    public static final int WRITE_ONLY = 64;

    public static final int TYPE_REGULAR = 0;
    public static final int TYPE_BLOCK_DEVICE = 1;
    public static final int TYPE_OTHER = 2;

    private FileDescriptors() {}

    /** @param path native path bytes without a terminating NUL */
    public static native int open0(byte[] path, int flags, int mode);

    public static native int close0(int fd);

    /** out (6 longs): size, type, logical block size, allocated bytes, device major, device minor. */
    public static native int stat0(int fd, long[] out);

    public static native int ftruncate0(int fd, long length);

    /** out: memory alignment, offset and length alignment. */
    public static native int directAlignment0(int fd, int[] out);
}

package io.pagewise.internal;

/** Pairs with {@code native/space.c}: fallocate and SEEK_DATA/SEEK_HOLE. Only this package makes the calls. */
public final class Space {
    /** FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE */
    public static final int PUNCH_HOLE = 1;
    /** FALLOC_FL_ZERO_RANGE */
    public static final int ZERO_RANGE = 2;

    public static final int SEEK_DATA = 0;
    public static final int SEEK_HOLE = 1;

    private Space() {}

    /** @return 0 or -errno */
    static int fallocate(int fd, int mode, long offset, long length) {
        if (mode != PUNCH_HOLE && mode != ZERO_RANGE) throw new IllegalArgumentException("unknown fallocate mode " + mode);
        return fallocate0(fd, mode, offset, length);
    }

    /** @return the offset found, or -errno (-ENXIO when there is no more data or hole) */
    static long seek(int fd, long offset, int whence) {
        if (whence != SEEK_DATA && whence != SEEK_HOLE) throw new IllegalArgumentException("unknown whence " + whence);
        return seek0(fd, offset, whence);
    }

    private static native int fallocate0(int fd, int mode, long offset, long length);

    private static native long seek0(int fd, long offset, int whence);
}

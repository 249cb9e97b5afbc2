package io.pagewise.internal;

/** Pairs with {@code native/space.c}: fallocate and SEEK_DATA/SEEK_HOLE. */
public final class Space {
    /** FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE */
    public static final int PUNCH_HOLE = 1;
    /** FALLOC_FL_ZERO_RANGE */
    public static final int ZERO_RANGE = 2;

    public static final int SEEK_DATA = 0;
    public static final int SEEK_HOLE = 1;

    private Space() {}

    public static native int fallocate0(int fd, int mode, long offset, long length);

    /** @return the offset found, or -errno (-ENXIO when there is no more data or hole) */
    public static native long seek0(int fd, long offset, int whence);
}

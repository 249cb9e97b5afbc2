package io.pagewise.internal;

/**
 * fallocate and SEEK_DATA/SEEK_HOLE: the topic's one Java home (its codes and checks), for every JDK.
 * {@link SpaceBinding} makes the calls, by JNI into {@code native/space.c} or on JDK 22+ by FFM. Only this package
 * makes the calls.
 */
public final class Space {
    /** FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE */
    public static final int PUNCH_HOLE = 1;
    /** FALLOC_FL_ZERO_RANGE */
    public static final int ZERO_RANGE = 2;
    /** 0: blocks allocated (reading as zeros) and the size extended to cover them */
    public static final int ALLOCATE = 3;

    public static final int SEEK_DATA = 0;
    public static final int SEEK_HOLE = 1;

    private Space() {}

    /** @return 0 or -errno */
    static int fallocate(int fd, int mode, long offset, long length) {
        if (mode != PUNCH_HOLE && mode != ZERO_RANGE && mode != ALLOCATE) throw new IllegalArgumentException("unknown fallocate mode " + mode);
        if (offset < 0 || length <= 0) return -Errno.EINVAL;
        return SpaceBinding.fallocate(fd, mode, offset, length);
    }

    /** @return the offset found, or -errno (-ENXIO when there is no more data or hole) */
    static long seek(int fd, long offset, int whence) {
        if (whence != SEEK_DATA && whence != SEEK_HOLE) throw new IllegalArgumentException("unknown whence " + whence);
        if (offset < 0) return -Errno.EINVAL;
        return SpaceBinding.seek(fd, offset, whence);
    }
}

package io.pagewise.internal;

/**
 * posix_fadvise, sync_file_range, fdatasync: the topic's one Java home (its codes and checks), for every JDK.
 * {@link AdviceBinding} makes the calls, by JNI into {@code native/advice.c} or on JDK 22+ by FFM. The calls take a
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
        if (offset < 0 || length < 0) return -Errno.EINVAL;
        return AdviceBinding.fadvise(fd, offset, length, advice);
    }

    static int syncFileRange(int fd, long offset, long length, int flags) {
        if ((flags & ~(SYNC_WAIT_BEFORE | SYNC_WRITE | SYNC_WAIT_AFTER)) != 0) {
            throw new IllegalArgumentException("unknown sync_file_range flags 0x" + Integer.toHexString(flags));
        }
        if (offset < 0 || length < 0) return -Errno.EINVAL;
        return AdviceBinding.syncFileRange(fd, offset, length, flags);
    }

    static int fdatasync(int fd) {
        return AdviceBinding.fdatasync(fd);
    }
}

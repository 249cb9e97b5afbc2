package io.pagewise.internal;

import java.nio.charset.Charset;
import java.nio.file.Path;

/**
 * Pairs with {@code native/file_descriptors.c}: open, close, stat, truncate, O_DIRECT alignment, isatty. The calls are
 * for this package, where {@link NativeRawFile} owns each descriptor; they return a result or {@code -errno}.
 */
public final class FileDescriptors {
    public static final int READ_WRITE = 1;
    public static final int CREATE = 2;
    public static final int EXCLUSIVE = 4;
    public static final int TRUNCATE = 8;
    public static final int DIRECT = 16;
    public static final int DSYNC = 32;
    private static final int ALL_FLAGS = 63;

    static final int TYPE_REGULAR = 0;
    static final int TYPE_BLOCK_DEVICE = 1;
    static final int TYPE_OTHER = 2;

    /** What {@link #stat} fills in: size, type, logical block size, allocated bytes, device major, device minor. */
    static final int STAT_FIELDS = 6;

    private static final Charset PATH_CHARSET = Charset.forName(System.getProperty("sun.jnu.encoding", "UTF-8"));
    private static final int CREATE_MODE = 0644;

    private FileDescriptors() {}

    /** @return the new descriptor, or -errno */
    static int open(Path path, int flags) {
        if ((flags & ~ALL_FLAGS) != 0) throw new IllegalArgumentException("unknown open flags 0x" + Integer.toHexString(flags));
        return open0(path.toString().getBytes(PATH_CHARSET), flags, CREATE_MODE);
    }

    static int close(int fd) {
        return close0(fd);
    }

    /** Fills out[0..{@link #STAT_FIELDS}). */
    static int stat(int fd, long[] out) {
        if (out.length < STAT_FIELDS) throw new IllegalArgumentException("stat needs " + STAT_FIELDS + " fields");
        return stat0(fd, out);
    }

    static int ftruncate(int fd, long length) {
        return ftruncate0(fd, length);
    }

    /** True when fd is a terminal: a query that changes nothing, so any package may ask it. */
    public static boolean isTerminal(int fd) {
        return isTerminal0(fd) == 1;
    }

    /** Fills out with the memory alignment, then the offset and length alignment. */
    static int directAlignment(int fd, int[] out) {
        if (out.length < 2) throw new IllegalArgumentException("alignment needs 2 fields");
        return directAlignment0(fd, out);
    }

    /** @return the statfs magic number of the file system holding fd, or -errno */
    static long fileSystemType(int fd) {
        return fileSystemType0(fd);
    }

    /** @return the open flags the kernel holds for fd, as {@link #READ_WRITE}, {@link #DIRECT} and {@link #DSYNC}, or -errno */
    static int statusFlags(int fd) {
        return statusFlags0(fd);
    }

    /** @param path native path bytes without a terminating NUL */
    private static native int open0(byte[] path, int flags, int mode);

    private static native int close0(int fd);

    private static native int stat0(int fd, long[] out);

    private static native int ftruncate0(int fd, long length);

    private static native int isTerminal0(int fd);

    private static native int directAlignment0(int fd, int[] out);

    private static native long fileSystemType0(int fd);

    private static native int statusFlags0(int fd);
}

package io.pagewise.internal;

import java.nio.charset.Charset;
import java.nio.file.Path;

/**
 * Open, close, stat, truncate, O_DIRECT alignment, isatty: the topic's one Java home (its flags, codes and checks),
 * for every JDK. {@link FileDescriptorsBinding} makes the calls, by JNI into {@code native/file_descriptors.c} or on
 * JDK 22+ by FFM. The calls are for this package, where {@link NativeRawFile} owns each descriptor; they return a
 * result or {@code -errno}.
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
    /** The longest native path the bindings copy (PATH_MAX is 4096; the kernel answers for what lies between). */
    private static final int MAX_PATH_BYTES = 65536;

    private FileDescriptors() {}

    /** @return the new descriptor, or -errno */
    static int open(Path path, int flags) {
        if ((flags & ~ALL_FLAGS) != 0) throw new IllegalArgumentException("unknown open flags 0x" + Integer.toHexString(flags));
        byte[] bytes = path.toString().getBytes(PATH_CHARSET);
        if (bytes.length == 0 || bytes.length > MAX_PATH_BYTES) return -Errno.ENAMETOOLONG;
        for (byte b : bytes) {
            if (b == 0) return -Errno.EINVAL; // embedded NUL
        }
        return FileDescriptorsBinding.open(bytes, flags, CREATE_MODE);
    }

    /** Closes a descriptor. EINTR is not retried: on Linux the descriptor is gone either way. */
    static int close(int fd) {
        return FileDescriptorsBinding.close(fd);
    }

    /** Fills out[0..{@link #STAT_FIELDS}). */
    static int stat(int fd, long[] out) {
        if (out.length < STAT_FIELDS) throw new IllegalArgumentException("stat needs " + STAT_FIELDS + " fields");
        return FileDescriptorsBinding.stat(fd, out);
    }

    static int ftruncate(int fd, long length) {
        if (length < 0) return -Errno.EINVAL;
        return FileDescriptorsBinding.ftruncate(fd, length);
    }

    /** True when fd is a terminal: a query that changes nothing, so any package may ask it. */
    public static boolean isTerminal(int fd) {
        return FileDescriptorsBinding.isTerminal(fd);
    }

    /** Fills out with the memory alignment, then the offset and length alignment. */
    static int directAlignment(int fd, int[] out) {
        if (out.length < 2) throw new IllegalArgumentException("alignment needs 2 fields");
        return FileDescriptorsBinding.directAlignment(fd, out);
    }

    /** @return the statfs magic number of the file system holding fd, or -errno */
    static long fileSystemType(int fd) {
        return FileDescriptorsBinding.fileSystemType(fd);
    }

    /** @return the open flags the kernel holds for fd, as {@link #READ_WRITE}, {@link #DIRECT} and {@link #DSYNC}, or -errno */
    static int statusFlags(int fd) {
        return FileDescriptorsBinding.statusFlags(fd);
    }
}

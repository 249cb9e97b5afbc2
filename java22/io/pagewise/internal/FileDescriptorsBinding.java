package io.pagewise.internal;

import static io.pagewise.internal.FileDescriptors.CREATE;
import static io.pagewise.internal.FileDescriptors.DIRECT;
import static io.pagewise.internal.FileDescriptors.DSYNC;
import static io.pagewise.internal.FileDescriptors.EXCLUSIVE;
import static io.pagewise.internal.FileDescriptors.READ_WRITE;
import static io.pagewise.internal.FileDescriptors.TRUNCATE;
import static io.pagewise.internal.FileDescriptors.TYPE_BLOCK_DEVICE;
import static io.pagewise.internal.FileDescriptors.TYPE_OTHER;
import static io.pagewise.internal.FileDescriptors.TYPE_REGULAR;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

/**
 * {@link FileDescriptors}' calls by FFM (JDK 22+), the twin of the JNI binding with its methods. FileDescriptors has
 * checked the arguments. They return a result or {@code -errno}.
 */
final class FileDescriptorsBinding {
    // Linux's values on x86_64 and aarch64, except O_DIRECT (Ffm.Arch).
    private static final int O_RDWR = 02;
    private static final int O_ACCMODE = 03;
    private static final int O_CREAT = 0100;
    private static final int O_EXCL = 0200;
    private static final int O_TRUNC = 01000;
    private static final int O_DSYNC = 010000;
    private static final int O_CLOEXEC = 02000000;
    private static final int F_GETFL = 3;
    private static final int AT_EMPTY_PATH = 0x1000;
    private static final int STATX_BASIC_STATS = 0x7ff;
    private static final int STATX_DIOALIGN = 0x2000;
    private static final int S_IFMT = 0170000;
    private static final int S_IFREG = 0100000;
    private static final int S_IFBLK = 060000;
    private static final long BLKGETSIZE64 = 0x80081272L;
    private static final long BLKSSZGET = 0x1268L;

    private static final MemorySegment EMPTY_PATH = Arena.global().allocate(1);

    private static final MethodHandle OPEN = Ffm.function("open",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT), 2);
    private static final MethodHandle CLOSE = Ffm.function("close", FunctionDescriptor.of(JAVA_INT, JAVA_INT));
    private static final MethodHandle FTRUNCATE = Ffm.function("ftruncate",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG));
    private static final MethodHandle ISATTY = Ffm.function("isatty", FunctionDescriptor.of(JAVA_INT, JAVA_INT));
    private static final MethodHandle IOCTL = Ffm.function("ioctl",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG, JAVA_LONG), 2);
    private static final MethodHandle FSTATFS = Ffm.function("fstatfs",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG));
    private static final MethodHandle FCNTL = Ffm.function("fcntl",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT), 2);

    private FileDescriptorsBinding() {}

    /** @param bytes native path bytes without a terminating NUL; @return the new descriptor, or -errno */
    static int open(byte[] bytes, int flags, int mode) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment name = arena.allocate(bytes.length + 1L);
            MemorySegment.copy(bytes, 0, name, JAVA_BYTE, 0, bytes.length); // allocate zeroes: the NUL is there
            int nativeFlags = openFlags(flags);
            return (int) Ffm.retried("open", state -> (int) OPEN.invokeExact(state, name, nativeFlags, mode));
        }
    }

    private static int openFlags(int flags) {
        int result = O_CLOEXEC | ((flags & READ_WRITE) != 0 ? O_RDWR : 0);
        if ((flags & CREATE) != 0) result |= O_CREAT;
        if ((flags & EXCLUSIVE) != 0) result |= O_EXCL;
        if ((flags & TRUNCATE) != 0) result |= O_TRUNC;
        if ((flags & DIRECT) != 0) result |= Ffm.ARCH.oDirect;
        if ((flags & DSYNC) != 0) result |= O_DSYNC;
        return result;
    }

    /** Closes a descriptor. EINTR is not retried: on Linux the descriptor is gone either way. */
    static int close(int fd) {
        long rc = Ffm.once("close", state -> (int) CLOSE.invokeExact(state, fd));
        return rc == -Ffm.EINTR ? 0 : (int) rc;
    }

    /**
     * Fills out[0..STAT_FIELDS): size, type, block size (the logical block size, BLKSSZGET, of a block
     * device; st_blksize otherwise), allocated bytes, and the major and minor number of the device holding the data.
     * By statx (Linux 4.11), whose layout is the same on every architecture, unlike struct stat's.
     */
    static int stat(int fd, long[] out) {
        MemorySegment stx = Ffm.scratch().out;
        int rc = statx(fd, STATX_BASIC_STATS, stx);
        if (rc < 0) return rc;
        int mode = Short.toUnsignedInt(stx.get(JAVA_SHORT, 28)) & S_IFMT;
        boolean block = mode == S_IFBLK;
        long size = stx.get(JAVA_LONG, 40);
        long blockSize = Integer.toUnsignedLong(stx.get(JAVA_INT, 4));
        long allocated = stx.get(JAVA_LONG, 48) * 512;
        long major = Integer.toUnsignedLong(stx.get(JAVA_INT, block ? 128 : 136));
        long minor = Integer.toUnsignedLong(stx.get(JAVA_INT, block ? 132 : 140));
        if (block) {
            long bytes = ioctl(fd, BLKGETSIZE64, stx, false);
            if (bytes < 0) return (int) bytes;
            long sector = ioctl(fd, BLKSSZGET, stx, true);
            if (sector < 0) return (int) sector;
            size = bytes;
            blockSize = sector;
        }
        out[0] = size;
        out[1] = mode == S_IFREG ? TYPE_REGULAR : block ? TYPE_BLOCK_DEVICE : TYPE_OTHER;
        out[2] = blockSize;
        out[3] = allocated;
        out[4] = major;
        out[5] = minor;
        return 0;
    }

    /** statx(fd, "", AT_EMPTY_PATH, mask) into stx (256 bytes, zeroed first); 0 or -errno. */
    private static int statx(int fd, int mask, MemorySegment stx) {
        stx.fill((byte) 0);
        return (int) Ffm.syscall(Ffm.ARCH.statx, fd, EMPTY_PATH.address(), AT_EMPTY_PATH, mask, stx.address(), 0);
    }

    /** A block-device ioctl that fills a u64 (or an int) at the start of scratch; the value or -errno. */
    private static long ioctl(int fd, long request, MemorySegment scratch, boolean intResult) {
        scratch.set(JAVA_LONG, 0, 0);
        long rc = Ffm.once("ioctl", state -> (int) IOCTL.invokeExact(state, fd, request, scratch.address()));
        if (rc < 0) return rc;
        return intResult ? scratch.get(JAVA_INT, 0) : scratch.get(JAVA_LONG, 0);
    }

    static int ftruncate(int fd, long length) {
        return (int) Ffm.retried("ftruncate", state -> (int) FTRUNCATE.invokeExact(state, fd, length));
    }

    static boolean isTerminal(int fd) {
        return Ffm.once("isatty", state -> (int) ISATTY.invokeExact(state, fd)) == 1;
    }

    /**
     * Fills out with the memory alignment, then the offset and length alignment, from statx(STATX_DIOALIGN) (Linux
     * 6.1); both 0 where the kernel or file system does not report it (the caller then falls back).
     */
    static int directAlignment(int fd, int[] out) {
        MemorySegment stx = Ffm.scratch().out;
        int rc = statx(fd, STATX_DIOALIGN, stx);
        boolean reported = rc == 0 && (stx.get(JAVA_INT, 0) & STATX_DIOALIGN) != 0 && stx.get(JAVA_INT, 156) != 0;
        out[0] = reported ? stx.get(JAVA_INT, 152) : 0;
        out[1] = reported ? stx.get(JAVA_INT, 156) : 0;
        return 0;
    }

    /** @return the statfs magic number of the file system holding fd, or -errno */
    static long fileSystemType(int fd) {
        MemorySegment statfs = Ffm.scratch().out; // struct statfs: 120 bytes on both, f_type first
        long rc = Ffm.retried("fstatfs", state -> (int) FSTATFS.invokeExact(state, fd, statfs.address()));
        return rc < 0 ? rc : statfs.get(JAVA_LONG, 0);
    }

    /** @return the open flags the kernel holds for fd, as READ_WRITE, DIRECT and DSYNC, or -errno */
    static int statusFlags(int fd) {
        int flags = (int) Ffm.once("fcntl", state -> (int) FCNTL.invokeExact(state, fd, F_GETFL));
        if (flags < 0) return flags;
        int result = 0;
        if ((flags & O_ACCMODE) == O_RDWR) result |= READ_WRITE;
        if ((flags & Ffm.ARCH.oDirect) != 0) result |= DIRECT;
        if ((flags & O_DSYNC) == O_DSYNC) result |= DSYNC; // O_SYNC includes the O_DSYNC bit
        return result;
    }
}

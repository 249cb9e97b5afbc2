package io.pagewise.internal;

import java.nio.ByteBuffer;

/**
 * Pairs with {@code native/io.c}: full-transfer pread/pwrite (and preadv2/pwritev2 when flags are set) between a
 * direct buffer's remaining bytes and a file; the bounds are checked again in C. Only this package makes the calls.
 */
public final class PositionalIo {
    public static final int DONTCACHE = 1;
    public static final int DSYNC = 2;
    /** Stop at the first short read (for O_DIRECT, where a retry at an unaligned offset fails). */
    public static final int SHORT_IS_EOF = 4;
    private static final int ALL_FLAGS = DONTCACHE | DSYNC | SHORT_IS_EOF;

    private PositionalIo() {}

    /**
     * Reads dst's remaining bytes at offset and advances its position by the bytes read.
     *
     * @return bytes read (fewer than asked only at end of file) or -errno
     */
    static int read(int fd, ByteBuffer dst, long offset, int flags) {
        checkFlags(flags);
        // C could not tell a read-only buffer from a writable one, and would write into it.
        if (dst.isReadOnly()) throw new IllegalArgumentException("read into a read-only buffer");
        int n = pread0(fd, direct(dst), dst.position(), dst.remaining(), offset, flags);
        if (n > 0) dst.position(dst.position() + n);
        return n;
    }

    /**
     * Writes all of src's remaining bytes at offset and advances its position past them.
     *
     * @return the bytes written or -errno
     */
    static int write(int fd, ByteBuffer src, long offset, int flags) {
        checkFlags(flags);
        int n = pwrite0(fd, direct(src), src.position(), src.remaining(), offset, flags);
        if (n > 0) src.position(src.position() + n);
        return n;
    }

    private static ByteBuffer direct(ByteBuffer buffer) {
        if (!buffer.isDirect()) throw new IllegalArgumentException("native I/O needs a direct buffer");
        return buffer;
    }

    private static void checkFlags(int flags) {
        if ((flags & ~ALL_FLAGS) != 0) throw new IllegalArgumentException("unknown I/O flags 0x" + Integer.toHexString(flags));
    }

    private static native int pread0(int fd, ByteBuffer direct, int position, int length, long offset, int flags);

    private static native int pwrite0(int fd, ByteBuffer direct, int position, int length, long offset, int flags);
}

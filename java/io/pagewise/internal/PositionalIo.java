package io.pagewise.internal;

import java.nio.ByteBuffer;

/**
 * Pairs with {@code native/io.c}: full-transfer pread/pwrite (and preadv2/pwritev2 when flags are set)
 * on bytes {@code [position, position + length)} of a direct buffer; the bounds are checked in C.
 */
public final class PositionalIo {
    public static final int DONTCACHE = 1;
    public static final int DSYNC = 2;
    /** Stop at the first short read (for O_DIRECT, where a retry at an unaligned offset fails). */
    public static final int SHORT_IS_EOF = 4;

    private PositionalIo() {}

    /** @return bytes read (fewer than length only at end of file) or -errno */
    public static native int pread0(int fd, ByteBuffer direct, int position, int length, long offset, int flags);

    /** @return length or -errno */
    public static native int pwrite0(int fd, ByteBuffer direct, int position, int length, long offset, int flags);
}

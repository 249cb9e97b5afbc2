package io.pagewise.internal;

import java.nio.ByteBuffer;

/**
 * Pairs with {@code native/positional_io.c}: full-transfer positional scatter/gather I/O (preadv/pwritev, and
 * preadv2/pwritev2 when flags are set, or io_submit with {@link #AIO}) between the remaining bytes of direct buffers,
 * in order, and a file. One call is one syscall unless the kernel transfers less than asked or the vector is longer
 * than IOV_MAX; C retries those and EINTR, and checks every buffer's range again. Only this package makes the calls.
 */
public final class PositionalIo {
    public static final int DONTCACHE = 1;
    public static final int DSYNC = 2;
    /** Stop at the first short read (for O_DIRECT, where a retry at an unaligned offset fails). */
    public static final int SHORT_IS_EOF = 4;
    /**
     * Write through Linux AIO, submitted and waited for by the calling thread (falls back to pwritev2 where the
     * kernel does not take it). For O_DIRECT on ext4: a write into a hole holds the exclusive inode lock only while
     * it is submitted, not until the disk is done, so such writes from several threads run at once.
     */
    public static final int AIO = 8;
    private static final int ALL_FLAGS = DONTCACHE | DSYNC | SHORT_IS_EOF | AIO;

    /**
     * Indexes of the array C fills in with what one call asked of the kernel, counted where the syscalls are made
     * with the flags as the kernel got them (keep in step with {@code native/positional_io.c}).
     */
    static final int ASKED_AIO_WRITES = 0;
    static final int ASKED_DSYNC_CALLS = 1;
    static final int ASKED_DSYNC_BYTES = 2;
    static final int ASKED_DONTCACHE_CALLS = 3;
    static final int ASKED_DONTCACHE_BYTES = 4;
    static final int ASKED_FIELDS = 5;

    private PositionalIo() {}

    /**
     * Reads at offset into the remaining bytes of dsts, in order, and advances each buffer's position by the bytes
     * read into it.
     *
     * @param asked null, or an array of {@link #ASKED_FIELDS} that gets what the call asked of the kernel
     * @return bytes read (fewer than asked only at end of file, or at a short read with SHORT_IS_EOF) or -errno
     */
    static long read(int fd, ByteBuffer[] dsts, long offset, int flags, long[] asked) {
        if (dsts.length == 1) return read(fd, dsts[0], offset, flags, asked);
        checkReadFlags(flags);
        for (ByteBuffer dst : dsts) checkWritable(dst);
        int[] positions = positions(dsts);
        long n = preadv0(fd, dsts, positions, lengths(dsts), dsts.length, offset, flags, asked);
        if (n > 0) advance(dsts, positions, n);
        return n;
    }

    /** {@link #read(int, ByteBuffer[], long, int, long[])} of one buffer. */
    static int read(int fd, ByteBuffer dst, long offset, int flags, long[] asked) {
        checkReadFlags(flags);
        checkWritable(dst);
        return (int) transferOne(fd, dst, offset, flags, false, asked);
    }

    private static void checkReadFlags(int flags) {
        checkFlags(flags);
        if ((flags & AIO) != 0) throw new IllegalArgumentException("AIO is for writes only");
    }

    /** C could not tell a read-only buffer from a writable one, and would write into it. */
    private static void checkWritable(ByteBuffer dst) {
        if (dst.isReadOnly()) throw new IllegalArgumentException("read into a read-only buffer");
    }

    /**
     * Writes all remaining bytes of srcs, in order, at offset and advances each buffer's position past them.
     *
     * @param asked null, or an array of {@link #ASKED_FIELDS} that gets what the call asked of the kernel
     * @return the bytes written or -errno
     */
    static long write(int fd, ByteBuffer[] srcs, long offset, int flags, long[] asked) {
        checkFlags(flags);
        if (srcs.length == 1) return transferOne(fd, srcs[0], offset, flags, true, asked);
        int[] positions = positions(srcs);
        long n = pwritev0(fd, srcs, positions, lengths(srcs), srcs.length, offset, flags, asked);
        if (n > 0) advance(srcs, positions, n);
        return n;
    }

    /** {@link #write(int, ByteBuffer[], long, int, long[])} of one buffer. */
    static long write(int fd, ByteBuffer src, long offset, int flags, long[] asked) {
        checkFlags(flags);
        return transferOne(fd, src, offset, flags, true, asked);
    }

    /** One buffer by pread0/pwrite0: no arrays built, and few calls back into the JVM. */
    private static long transferOne(int fd, ByteBuffer buffer, long offset, int flags, boolean writing, long[] asked) {
        if (!buffer.isDirect()) throw new IllegalArgumentException("native I/O needs direct buffers");
        int position = buffer.position();
        int length = buffer.limit() - position;
        long n = writing ? pwrite0(fd, buffer, position, length, offset, flags, asked)
                : pread0(fd, buffer, position, length, offset, flags, asked);
        if (n > 0) buffer.position(position + (int) n);
        return n;
    }

    private static int[] positions(ByteBuffer[] buffers) {
        if (!Buffers.allDirect(buffers)) throw new IllegalArgumentException("native I/O needs direct buffers");
        return Buffers.positions(buffers);
    }

    private static int[] lengths(ByteBuffer[] buffers) {
        int[] lengths = new int[buffers.length];
        for (int i = 0; i < buffers.length; i++) lengths[i] = buffers[i].remaining();
        return lengths;
    }

    /** Moves the positions forward by n bytes in all, filling the buffers in order. */
    private static void advance(ByteBuffer[] buffers, int[] positions, long n) {
        for (int i = 0; i < buffers.length && n > 0; i++) {
            int moved = (int) Math.min(n, buffers[i].limit() - positions[i]);
            buffers[i].position(positions[i] + moved);
            n -= moved;
        }
    }

    private static void checkFlags(int flags) {
        if ((flags & ~ALL_FLAGS) != 0) throw new IllegalArgumentException("unknown I/O flags 0x" + Integer.toHexString(flags));
    }

    private static native long preadv0(int fd, ByteBuffer[] buffers, int[] positions, int[] lengths, int count,
                                       long offset, int flags, long[] asked);

    private static native long pwritev0(int fd, ByteBuffer[] buffers, int[] positions, int[] lengths, int count,
                                        long offset, int flags, long[] asked);

    // buffer must be direct: C reads its address field without checking its class (transferOne checks).
    private static native long pread0(int fd, ByteBuffer buffer, int position, int length, long offset, int flags,
                                      long[] asked);

    private static native long pwrite0(int fd, ByteBuffer buffer, int position, int length, long offset, int flags,
                                       long[] asked);
}

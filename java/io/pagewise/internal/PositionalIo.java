package io.pagewise.internal;

import java.nio.ByteBuffer;

/**
 * Full-transfer positional scatter/gather I/O (preadv/pwritev, and preadv2/pwritev2 when flags are set, or io_submit
 * with {@link #AIO}) between the remaining bytes of direct buffers, in order, and a file. One call is one syscall
 * unless the kernel transfers less than asked or the vector is longer than IOV_MAX; short transfers and EINTR are
 * retried. Only this package makes the calls.
 *
 * <p>This class is the topic's one Java home, compiled once for every JDK: the flags, the argument checks and the
 * buffers' positions. {@link PositionalIoBinding} makes the calls: by JNI into {@code native/positional_io.c}, or on
 * JDK 22+ by FFM (its twin in META-INF/versions/22).
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
    /** The flags that need more than pread/pwrite: preadv2/pwritev2 or io_submit, and counting what they asked. */
    static final int COUNTED_FLAGS = DONTCACHE | DSYNC | AIO;
    private static final int ALL_FLAGS = DONTCACHE | DSYNC | SHORT_IS_EOF | AIO;

    /**
     * Indexes of the array the binding fills in with what one call asked of the kernel, counted where the syscalls
     * are made with the flags as the kernel got them (keep in step with {@code native/positional_io.c}).
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
        return transfer(fd, dsts, offset, flags, false, asked);
    }

    /** {@link #read(int, ByteBuffer[], long, int, long[])} of one buffer. */
    static int read(int fd, ByteBuffer dst, long offset, int flags, long[] asked) {
        checkReadFlags(flags);
        checkWritable(dst);
        return (int) transfer(fd, dst, offset, flags, false, asked);
    }

    /**
     * Writes all remaining bytes of srcs, in order, at offset and advances each buffer's position past them.
     *
     * @param asked null, or an array of {@link #ASKED_FIELDS} that gets what the call asked of the kernel
     * @return the bytes written or -errno
     */
    static long write(int fd, ByteBuffer[] srcs, long offset, int flags, long[] asked) {
        checkFlags(flags);
        if (srcs.length == 1) return transfer(fd, srcs[0], offset, flags, true, asked);
        return transfer(fd, srcs, offset, flags, true, asked);
    }

    /** {@link #write(int, ByteBuffer[], long, int, long[])} of one buffer. */
    static long write(int fd, ByteBuffer src, long offset, int flags, long[] asked) {
        checkFlags(flags);
        return transfer(fd, src, offset, flags, true, asked);
    }

    private static void checkReadFlags(int flags) {
        checkFlags(flags);
        if ((flags & AIO) != 0) throw new IllegalArgumentException("AIO is for writes only");
    }

    private static void checkFlags(int flags) {
        if ((flags & ~ALL_FLAGS) != 0) throw new IllegalArgumentException("unknown I/O flags 0x" + Integer.toHexString(flags));
    }

    /** Neither binding could tell a read-only buffer from a writable one: the kernel would write into it. */
    private static void checkWritable(ByteBuffer dst) {
        if (dst.isReadOnly()) throw new IllegalArgumentException("read into a read-only buffer");
    }

    /** One buffer, the common small request: no arrays built. */
    private static long transfer(int fd, ByteBuffer buffer, long offset, int flags, boolean writing, long[] asked) {
        if (!buffer.isDirect()) throw new IllegalArgumentException("native I/O needs direct buffers");
        int position = buffer.position();
        int length = buffer.limit() - position;
        long n = checked(offset, length, writing, asked);
        if (n == 0 && length > 0) {
            n = PositionalIoBinding.transfer(fd, buffer, position, length, offset, flags, writing, asked);
        }
        if (n > 0) buffer.position(position + (int) n);
        return n;
    }

    private static long transfer(int fd, ByteBuffer[] buffers, long offset, int flags, boolean writing,
                                 long[] asked) {
        if (!Buffers.allDirect(buffers)) throw new IllegalArgumentException("native I/O needs direct buffers");
        long total = Buffers.remaining(buffers);
        long n = checked(offset, total, writing, asked);
        if (n == 0 && total > 0) n = PositionalIoBinding.transfer(fd, buffers, offset, flags, writing, asked);
        if (n > 0) advance(buffers, n);
        return n;
    }

    /**
     * The checks of a request of total bytes at offset that need no call: 0 when it may go ahead, else -errno (an
     * asked array too short, a negative offset, or an end past the largest offset).
     */
    private static long checked(long offset, long total, boolean writing, long[] asked) {
        if (asked != null && asked.length < ASKED_FIELDS) return -Errno.EINVAL;
        if (offset < 0) return -Errno.EINVAL;
        if (offset > Long.MAX_VALUE - total) return writing ? -Errno.EFBIG : -Errno.EOVERFLOW;
        return 0;
    }

    /** Moves the positions forward by n bytes in all, filling the buffers in order. */
    private static void advance(ByteBuffer[] buffers, long n) {
        for (int i = 0; i < buffers.length && n > 0; i++) {
            int moved = (int) Math.min(n, buffers[i].remaining());
            buffers[i].position(buffers[i].position() + moved);
            n -= moved;
        }
    }
}

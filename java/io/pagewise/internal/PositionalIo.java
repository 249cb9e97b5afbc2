package io.pagewise.internal;

import java.nio.ByteBuffer;

/**
 * Full-transfer positional scatter/gather I/O (preadv/pwritev, and preadv2/pwritev2 when flags are set, or io_submit
 * with {@link #AIO}) between the remaining bytes of direct buffers, in order, and a file. One call is one syscall
 * unless the kernel transfers less than asked or the vector is longer than IOV_MAX; short transfers and EINTR are
 * retried. Only this package makes the calls.
 *
 * <p>This class is the topic's one Java home, compiled once for every JDK: the flags, the checks the bindings'
 * memory safety rests on, and the buffers' positions. The request's range was checked once, where its
 * {@link IoVector} was made. {@link PositionalIoBinding} makes the calls: by JNI into {@code native/positional_io.c}, or on
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
     * Reads the request's bytes into its buffers, in order, and advances each buffer's position by the bytes read
     * into it.
     *
     * @param asked null, or an array of {@link #ASKED_FIELDS} that gets what the call asked of the kernel
     * @return bytes read (fewer than asked only at end of file, or at a short read with SHORT_IS_EOF) or -errno
     */
    static long read(int fd, IoVector request, int flags, long[] asked) {
        // The request's parts, not the request, go on: this method stays small enough to be inlined wherever it is
        // called. StorageFile's one-buffer calls pass their thread's own request (see IoVector): whether the JIT
        // would take a new one apart depended on what it had compiled first, and through FFM on JDK 25 it mostly
        // did not (48 bytes a call).
        return transfer(fd, request.single(), request.many(), request.position(), request.offset(), request.length(),
                request.isDirect(), flags, false, asked);
    }

    /**
     * Writes all the request's bytes, in order, and advances each buffer's position past them.
     *
     * @param asked null, or an array of {@link #ASKED_FIELDS} that gets what the call asked of the kernel
     * @return the bytes written or -errno
     */
    static long write(int fd, IoVector request, int flags, long[] asked) {
        return transfer(fd, request.single(), request.many(), request.position(), request.offset(), request.length(),
                request.isDirect(), flags, true, asked);
    }

    /**
     * A read into, or a write from, [position, limit) of one of this package's bounce buffers, direct by
     * construction, whose range was derived from a checked request: no vector is made for it.
     */
    static long bounced(int fd, ByteBuffer bounce, long offset, int flags, boolean writing, long[] asked) {
        return transfer(fd, bounce, null, bounce.position(), offset, bounce.remaining(), bounce.isDirect(), flags,
                writing, asked);
    }

    /**
     * A request (one buffer from position, or else the buffers) as its {@link IoVector} checked it when it was made;
     * only what the binding's memory safety rests on is refused here: buffers the kernel cannot take by address, or
     * flags it does not know.
     */
    private static long transfer(int fd, ByteBuffer one, ByteBuffer[] many, int position, long offset, long length,
                                 boolean direct, int flags, boolean writing, long[] asked) {
        if (!direct) throw new IllegalArgumentException("native I/O needs direct buffers");
        if ((flags & ~ALL_FLAGS) != 0) throw new IllegalArgumentException("unknown I/O flags 0x" + Integer.toHexString(flags));
        if (!writing && (flags & AIO) != 0) throw new IllegalArgumentException("AIO is for writes only");
        if (asked != null && asked.length < ASKED_FIELDS) return -Errno.EINVAL;
        if (length == 0) return 0;
        long n;
        if (one != null) {
            n = PositionalIoBinding.transfer(fd, one, position, (int) length, offset, flags, writing, asked);
            if (n > 0) one.position(position + (int) n);
        } else {
            n = PositionalIoBinding.transfer(fd, many, offset, flags, writing, asked);
            if (n > 0) advance(many, n);
        }
        return n;
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

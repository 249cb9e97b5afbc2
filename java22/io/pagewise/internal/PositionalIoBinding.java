package io.pagewise.internal;

import static io.pagewise.internal.Errno.EIO;
import static io.pagewise.internal.PositionalIo.AIO;
import static io.pagewise.internal.PositionalIo.ASKED_AIO_WRITES;
import static io.pagewise.internal.PositionalIo.ASKED_DONTCACHE_BYTES;
import static io.pagewise.internal.PositionalIo.ASKED_DONTCACHE_CALLS;
import static io.pagewise.internal.PositionalIo.ASKED_DSYNC_BYTES;
import static io.pagewise.internal.PositionalIo.ASKED_DSYNC_CALLS;
import static io.pagewise.internal.PositionalIo.ASKED_FIELDS;
import static io.pagewise.internal.PositionalIo.COUNTED_FLAGS;
import static io.pagewise.internal.PositionalIo.DONTCACHE;
import static io.pagewise.internal.PositionalIo.DSYNC;
import static io.pagewise.internal.PositionalIo.SHORT_IS_EOF;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.lang.ref.Reference;
import java.nio.ByteBuffer;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * {@link PositionalIo}'s calls by FFM (JDK 22+), the twin of the JNI binding with its methods: the loops that
 * {@code native/positional_io.c} runs for the JNI binding run here, over the same calls. Every byte is transferred:
 * short transfers and EINTR are retried, vectors longer than IOV_MAX split. A single buffer without flags goes by
 * pread/pwrite, the cheapest call for small requests. PositionalIo and the request's IoVector have checked the arguments: the buffers are direct,
 * the flags known, the offset and the asked array valid, and there is at least one byte to move.
 */
final class PositionalIoBinding {
    private static final int RWF_DSYNC = 0x2;
    private static final int RWF_DONTCACHE = 0x80; // Linux 6.14
    private static final int IOV_MAX = 1024;
    /** The most one read or write transfers on Linux (MAX_RW_COUNT); a larger request comes back short. */
    private static final long MAX_RW_COUNT = Integer.MAX_VALUE & ~4095L;

    private static final FunctionDescriptor RW = FunctionDescriptor.of(JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_LONG,
            JAVA_LONG);
    private static final FunctionDescriptor RWV = FunctionDescriptor.of(JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_INT,
            JAVA_LONG);
    private static final MethodHandle PREAD = Ffm.function("pread", RW);
    private static final MethodHandle PWRITE = Ffm.function("pwrite", RW);
    private static final MethodHandle PREADV = Ffm.function("preadv", RWV);
    private static final MethodHandle PWRITEV = Ffm.function("pwritev", RWV);
    private static final MethodHandle FDATASYNC = Ffm.function("fdatasync", FunctionDescriptor.of(JAVA_INT, JAVA_INT));

    private PositionalIoBinding() {}

    /**
     * [position, position + length) of one buffer. Without flags by pread/pwrite, without the arrays (the vector and
     * the counts) a vector builds per call, which small requests would mostly spend their time on.
     */
    static long transfer(int fd, ByteBuffer buffer, int position, int length, long offset, int flags,
                         boolean writing, long[] asked) {
        if ((flags & COUNTED_FLAGS) != 0) return transfer(fd, new ByteBuffer[] {buffer}, offset, flags, writing, asked);
        // address(buffer), written out: one level less lets the JIT drop the buffer's segment (24 bytes a call)
        MemorySegment segment = MemorySegment.ofBuffer(buffer);
        if (!segment.scope().isAlive()) {
            throw new IllegalStateException("Already closed: the buffer's memory was freed (its arena is closed)");
        }
        if (!segment.isAccessibleBy(Thread.currentThread())) {
            throw new WrongThreadException("the buffer's memory belongs to an arena confined to another thread");
        }
        long n;
        try {
            // The segment's own size bounds the length: the kernel never gets past the buffer's limit, even should
            // the buffer have moved since its request was made.
            n = transferOne(fd, segment.address(), Math.min(length, segment.byteSize()), offset, flags, writing);
        } finally {
            Reference.reachabilityFence(buffer); // the kernel used its memory by raw address
        }
        if (asked != null) java.util.Arrays.fill(asked, 0, ASKED_FIELDS, 0); // nothing counted without flags
        return n;
    }

    /**
     * The remaining bytes of the buffers, in order; their positions are left to the caller. Described and transferred
     * in this one method: one more level leaves the JIT too few inlining levels to drop the buffers' segments, which
     * then cost an allocation per call (64 bytes for two buffers, measured on JDK 25).
     */
    static long transfer(int fd, ByteBuffer[] buffers, long offset, int flags, boolean writing, long[] asked) {
        long[] counts = new long[ASKED_FIELDS];
        int count = buffers.length;
        long n;
        Ffm.Scratch scratch = Ffm.scratch();
        try (Arena arena = count <= Ffm.Scratch.IOVECS ? null : Arena.ofConfined()) {
            MemorySegment iov = arena == null ? scratch.iovecs : arena.allocate(Ffm.Scratch.IOVEC_SIZE * count, 8);
            long total = 0;
            for (int i = 0; i < count; i++) {
                int length = buffers[i].remaining();
                iov.set(JAVA_LONG, Ffm.Scratch.IOVEC_SIZE * i, length == 0 ? 0 : address(buffers[i]));
                iov.set(JAVA_LONG, Ffm.Scratch.IOVEC_SIZE * i + 8, length);
                total += length;
            }
            n = transferAll(fd, iov, count, total, offset, flags, writing, counts);
        } finally {
            Reference.reachabilityFence(buffers); // the kernel used their memory by raw address
        }
        if (asked != null) System.arraycopy(counts, 0, asked, 0, ASKED_FIELDS);
        return n;
    }

    /**
     * The address of a direct buffer's position. A buffer of a {@link java.lang.foreign.Arena}'s memory is checked as
     * FileChannel checks it: memory already freed (the arena closed) would be written by the kernel, and memory of
     * another thread's confined arena is not this thread's to use.
     */
    private static long address(ByteBuffer buffer) {
        MemorySegment segment = MemorySegment.ofBuffer(buffer);
        if (!segment.scope().isAlive()) {
            throw new IllegalStateException("Already closed: the buffer's memory was freed (its arena is closed)");
        }
        if (!segment.isAccessibleBy(Thread.currentThread())) {
            throw new WrongThreadException("the buffer's memory belongs to an arena confined to another thread");
        }
        return segment.address();
    }

    /** Every byte of [address, address + length) by pread/pwrite, retrying short transfers and EINTR. */
    private static long transferOne(int fd, long address, long length, long offset, int flags, boolean writing) {
        MemorySegment state = Ffm.scratch().callState;
        long done = 0;
        while (done < length) {
            long wanted = Math.min(length - done, MAX_RW_COUNT);
            long n;
            try {
                n = writing ? (long) PWRITE.invokeExact(state, fd, address + done, wanted, offset + done)
                        : (long) PREAD.invokeExact(state, fd, address + done, wanted, offset + done);
            } catch (Throwable e) {
                throw Ffm.failed(writing ? "pwrite" : "pread", e);
            }
            if (n < 0) {
                int errno = Ffm.errno(state);
                if (errno == Ffm.EINTR) continue;
                return -errno;
            }
            if (n == 0) {
                if (writing) return -EIO; // a regular file never accepts zero bytes of a non-empty write
                break; // end of file
            }
            done += n;
            if (!writing && (flags & SHORT_IS_EOF) != 0 && n < wanted) break;
        }
        return done;
    }

    /**
     * Transfers every byte of the vector iov[0..count), retrying short transfers and EINTR; iov is consumed. A read
     * stops at end of file, or at the first short read with SHORT_IS_EOF. Returns the bytes moved or -errno.
     */
    private static long transferAll(int fd, MemorySegment iov, int count, long total, long offset, int flags,
                                    boolean writing, long[] counts) {
        int first = 0;
        long done = 0;
        while (done < total) {
            int batch = Math.min(count - first, IOV_MAX);
            long wanted = 0;
            for (int i = first; i < first + batch; i++) wanted += iov.get(JAVA_LONG, Ffm.Scratch.IOVEC_SIZE * i + 8);
            wanted = Math.min(wanted, MAX_RW_COUNT);
            long n = transferOnce(fd, iov.address() + Ffm.Scratch.IOVEC_SIZE * first, batch, offset + done, flags,
                    writing, counts);
            if (n == -Ffm.EINTR) continue;
            if (n < 0) return n;
            if (n == 0) {
                if (writing) return -EIO;
                break;
            }
            done += n;
            first = advance(iov, first, count, n);
            if (!writing && (flags & SHORT_IS_EOF) != 0 && n < wanted) break;
        }
        return done;
    }

    /** Drops the first done bytes from the vector [first, count): whole iovecs are skipped, a partial one shortened. */
    private static int advance(MemorySegment iov, int first, int count, long done) {
        while (first < count && done >= iov.get(JAVA_LONG, Ffm.Scratch.IOVEC_SIZE * first + 8)) {
            done -= iov.get(JAVA_LONG, Ffm.Scratch.IOVEC_SIZE * first + 8);
            first++;
        }
        if (first < count && done > 0) {
            long at = Ffm.Scratch.IOVEC_SIZE * first;
            iov.set(JAVA_LONG, at, iov.get(JAVA_LONG, at) + done);
            iov.set(JAVA_LONG, at + 8, iov.get(JAVA_LONG, at + 8) - done);
        }
        return first;
    }

    /**
     * One syscall over count (at most IOV_MAX) iovecs at address iov; plain preadv/pwritev without flags. With AIO a
     * write goes by io_submit where the kernel takes it. Returns bytes or -errno, and counts what it asked.
     */
    private static long transferOnce(int fd, long iov, int count, long offset, int flags, boolean writing,
                                     long[] counts) {
        int nativeFlags = ((flags & DONTCACHE) != 0 ? RWF_DONTCACHE : 0) | ((flags & DSYNC) != 0 ? RWF_DSYNC : 0);
        long n = Aio.REFUSED;
        if (writing && (flags & AIO) != 0) {
            n = Aio.write(fd, iov, count, offset, nativeFlags);
            if (n != Aio.REFUSED) counts[ASKED_AIO_WRITES]++;
        }
        if (n == Aio.REFUSED) {
            if (nativeFlags != 0) {
                // By the system call: glibc has no preadv2/pwritev2 before 2.26. The offset is the low word.
                n = Ffm.syscall(writing ? Ffm.ARCH.pwritev2 : Ffm.ARCH.preadv2, fd, iov, count, offset, 0,
                        nativeFlags);
                if (n == -Ffm.ENOSYS) n = -Ffm.EOPNOTSUPP; // before Linux 4.6: these flags are not supported
            } else {
                n = vectored(writing, fd, iov, count, offset);
            }
            if (n == -Ffm.EOPNOTSUPP && writing && nativeFlags == RWF_DSYNC) {
                n = writeThenSync(fd, iov, count, offset); // no RWF_DSYNC in this kernel (or qemu-user)
                nativeFlags = 0; // not counted: no RWF_DSYNC reached the kernel
            }
        }
        if (n > 0 && (nativeFlags & RWF_DSYNC) != 0) {
            counts[ASKED_DSYNC_CALLS]++;
            counts[ASKED_DSYNC_BYTES] += n;
        }
        if (n > 0 && (nativeFlags & RWF_DONTCACHE) != 0) {
            counts[ASKED_DONTCACHE_CALLS]++;
            counts[ASKED_DONTCACHE_BYTES] += n;
        }
        return n;
    }

    private static long vectored(boolean writing, int fd, long iov, int count, long offset) {
        MemorySegment state = Ffm.scratch().callState;
        long n;
        try {
            n = writing ? (long) PWRITEV.invokeExact(state, fd, iov, count, offset)
                    : (long) PREADV.invokeExact(state, fd, iov, count, offset);
        } catch (Throwable e) {
            throw Ffm.failed(writing ? "pwritev" : "preadv", e);
        }
        return Ffm.checked(n, state);
    }

    /** pwritev, then fdatasync, which makes that write durable as RWF_DSYNC would. */
    private static long writeThenSync(int fd, long iov, int count, long offset) {
        long n = vectored(true, fd, iov, count, offset);
        if (n <= 0) return n;
        long rc = Ffm.retried("fdatasync", state -> (int) FDATASYNC.invokeExact(state, fd));
        return rc < 0 ? rc : n;
    }

    /**
     * Writes through Linux AIO, each waited for by the thread that submitted it (see {@link PositionalIo#AIO} for
     * why). A write
     * borrows a context (one write in flight) from a pool for its duration; at most {@link #CONTEXTS} are made, each
     * kept until the JVM ends. Where io_setup fails (no AIO in the kernel, aio-max-nr reached) the write goes
     * synchronously.
     */
    private static final class Aio {
        static final long REFUSED = Long.MIN_VALUE;
        static final int CONTEXTS = 256;
        private static final int IOCB_CMD_PWRITEV = 8;
        private static final ConcurrentLinkedQueue<Long> FREE = new ConcurrentLinkedQueue<>();
        /** Contexts made, or tried: one that io_setup refused, or that was abandoned, counts for good. */
        private static final AtomicInteger MADE = new AtomicInteger();

        private Aio() {}

        /** One pwritev through a borrowed context, waited for: bytes or -errno, or REFUSED (write it yourself). */
        static long write(int fd, long iov, int count, long offset, int rwFlags) {
            long context = borrow();
            if (context == 0) return REFUSED;
            MemorySegment aio = Ffm.scratch().aio;
            MemorySegment iocb = aio.asSlice(0, 64);
            iocb.fill((byte) 0);
            iocb.set(JAVA_INT, 12, rwFlags); // aio_rw_flags, after aio_key on little-endian machines
            iocb.set(JAVA_SHORT, 16, (short) IOCB_CMD_PWRITEV);
            iocb.set(JAVA_INT, 20, fd);
            iocb.set(JAVA_LONG, 24, iov);
            iocb.set(JAVA_LONG, 32, count);
            iocb.set(JAVA_LONG, 40, offset);
            aio.set(JAVA_LONG, 64, iocb.address());
            long submitted = Ffm.syscall(Ffm.ARCH.ioSubmit, context, 1, aio.address() + 64, 0, 0, 0);
            if (submitted != 1) {
                FREE.offer(context);
                return REFUSED;
            }
            long event = aio.address() + 72;
            // EINTR leaves the write in flight and its completion in the ring: Ffm.syscall waits again.
            long completed = Ffm.syscall(Ffm.ARCH.ioGetevents, context, 1, 1, event, 0, 0);
            if (completed != 1) {
                // Cannot happen with valid arguments. io_destroy waits for the write still in flight, so the
                // buffers are free when this returns; the context is not used again.
                Ffm.syscall(Ffm.ARCH.ioDestroy, context, 0, 0, 0, 0, 0);
                return -EIO; // whether the write happened is unknown
            }
            FREE.offer(context);
            return aio.get(JAVA_LONG, 72 + 16); // io_event.res: bytes, or -errno
        }

        private static long borrow() {
            Long context = FREE.poll();
            if (context != null) return context;
            if (MADE.get() >= CONTEXTS || MADE.incrementAndGet() > CONTEXTS) return 0;
            MemorySegment out = Ffm.scratch().out;
            out.set(JAVA_LONG, 0, 0);
            if (Ffm.syscall(Ffm.ARCH.ioSetup, 1, out.address(), 0, 0, 0, 0) != 0) return 0;
            return out.get(JAVA_LONG, 0);
        }
    }
}

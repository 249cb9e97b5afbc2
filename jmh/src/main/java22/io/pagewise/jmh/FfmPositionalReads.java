package io.pagewise.jmh;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.lang.ref.Reference;
import java.nio.ByteBuffer;

/**
 * pread and preadv of the C library bound with the FFM API (JDK 22+), with the contract of the library's JNI read
 * ({@code PositionalIo.read} with no flags): fill the buffer's remaining bytes from offset, short only at end of file,
 * EINTR retried, the buffer's position moved past what was read, and {@code -errno} on failure. errno is captured by
 * the linker ({@code captureCallState("errno")}) right after the call, before the JVM can overwrite it.
 */
final class FfmPositionalReads {
    private static final int EINTR = 4;
    private static final int EINVAL = 22;
    private static final long IOVEC_SIZE = 16; // struct iovec { void *iov_base; size_t iov_len; } on LP64

    private static final MemoryLayout CALL_STATE = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO = CALL_STATE.varHandle(MemoryLayout.PathElement.groupElement("errno"));

    /** ssize_t pread(int fd, void *buf, size_t count, off_t offset), errno captured into the first argument. */
    private static final MethodHandle PREAD;
    /** ssize_t preadv(int fd, const struct iovec *iov, int iovcnt, off_t offset), errno captured likewise. */
    private static final MethodHandle PREADV;

    static {
        Linker linker = Linker.nativeLinker();
        Linker.Option errno = Linker.Option.captureCallState("errno");
        PREAD = linker.downcallHandle(linker.defaultLookup().find("pread").orElseThrow(),
                FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG, JAVA_LONG), errno);
        PREADV = linker.downcallHandle(linker.defaultLookup().find("preadv").orElseThrow(),
                FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_INT, JAVA_LONG), errno);
    }

    /**
     * Native memory each thread reuses for the captured errno and one iovec: a library would have to keep it per
     * thread too, since a call may come from any thread and allocating it per call costs a malloc and a free.
     */
    private static final class Scratch {
        final MemorySegment callState;
        final MemorySegment iovec;

        Scratch() {
            Arena arena = Arena.ofAuto();
            callState = arena.allocate(CALL_STATE);
            iovec = arena.allocate(IOVEC_SIZE, 8);
        }
    }

    private static final ThreadLocal<Scratch> SCRATCH = ThreadLocal.withInitial(Scratch::new);

    private FfmPositionalReads() {}

    /** pread into dst's remaining bytes: @return the bytes read, or -errno */
    static int pread(int fd, ByteBuffer dst, long offset) {
        int length = checked(dst, offset);
        if (length <= 0) return length;
        MemorySegment target = MemorySegment.ofBuffer(dst); // [position, limit) of dst
        MemorySegment callState = SCRATCH.get().callState;
        long done = 0;
        try {
            while (done < length) {
                MemorySegment rest = done == 0 ? target : target.asSlice(done);
                long n = (long) PREAD.invokeExact(callState, fd, rest, length - done, offset + done);
                if (n < 0) {
                    int errno = (int) ERRNO.get(callState, 0L);
                    if (errno == EINTR) continue;
                    return -errno;
                }
                if (n == 0) break; // end of file
                done += n;
            }
        } catch (Throwable e) {
            throw new AssertionError("pread downcall", e); // invokeExact with the exact type does not throw
        }
        dst.position(dst.position() + (int) done);
        return (int) done;
    }

    /** The same through preadv with a one-entry vector, as the library's C does: @return the bytes read, or -errno */
    static int preadv(int fd, ByteBuffer dst, long offset) {
        int length = checked(dst, offset);
        if (length <= 0) return length;
        long base = MemorySegment.ofBuffer(dst).address();
        Scratch scratch = SCRATCH.get();
        long done = 0;
        try {
            while (done < length) {
                scratch.iovec.set(JAVA_LONG, 0, base + done);
                scratch.iovec.set(JAVA_LONG, 8, length - done);
                long n = (long) PREADV.invokeExact(scratch.callState, fd, scratch.iovec, 1, offset + done);
                if (n < 0) {
                    int errno = (int) ERRNO.get(scratch.callState, 0L);
                    if (errno == EINTR) continue;
                    return -errno;
                }
                if (n == 0) break;
                done += n;
            }
        } catch (Throwable e) {
            throw new AssertionError("preadv downcall", e);
        } finally {
            Reference.reachabilityFence(dst); // the kernel wrote through a raw address: keep the memory alive until here
        }
        dst.position(dst.position() + (int) done);
        return (int) done;
    }

    /** @return dst's remaining bytes, or -EINVAL for a negative offset (as the JNI layer answers) */
    private static int checked(ByteBuffer dst, long offset) {
        if (!dst.isDirect()) throw new IllegalArgumentException("native I/O needs direct buffers");
        if (dst.isReadOnly()) throw new IllegalArgumentException("read into a read-only buffer");
        if (offset < 0) return -EINVAL;
        return dst.remaining();
    }
}

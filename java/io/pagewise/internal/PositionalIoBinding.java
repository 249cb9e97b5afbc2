package io.pagewise.internal;

import java.nio.ByteBuffer;

/**
 * {@link PositionalIo}'s calls by JNI, into {@code native/positional_io.c}, which transfers every byte: it retries
 * short transfers and EINTR, splits vectors longer than IOV_MAX, and checks every buffer's range again. The FFM twin
 * (JDK 22+) has the same methods. PositionalIo and the request's IoVector have checked the arguments: the buffers are direct, the flags known,
 * the offset and the asked array valid, and there is at least one byte to move.
 */
final class PositionalIoBinding {
    private PositionalIoBinding() {}

    /** [position, position + length) of one buffer by pread/pwrite: no arrays built, few calls back into the JVM. */
    static long transfer(int fd, ByteBuffer buffer, int position, int length, long offset, int flags,
                         boolean writing, long[] asked) {
        return writing ? pwrite0(fd, buffer, position, length, offset, flags, asked)
                : pread0(fd, buffer, position, length, offset, flags, asked);
    }

    /** The remaining bytes of the buffers, in order; their positions are left to the caller. */
    static long transfer(int fd, ByteBuffer[] buffers, long offset, int flags, boolean writing, long[] asked) {
        int[] positions = Buffers.positions(buffers);
        int[] lengths = new int[buffers.length];
        for (int i = 0; i < buffers.length; i++) lengths[i] = buffers[i].limit() - positions[i];
        return writing ? pwritev0(fd, buffers, positions, lengths, buffers.length, offset, flags, asked)
                : preadv0(fd, buffers, positions, lengths, buffers.length, offset, flags, asked);
    }

    private static native long preadv0(int fd, ByteBuffer[] buffers, int[] positions, int[] lengths, int count,
                                       long offset, int flags, long[] asked);

    private static native long pwritev0(int fd, ByteBuffer[] buffers, int[] positions, int[] lengths, int count,
                                        long offset, int flags, long[] asked);

    // buffer must be direct: C reads its address field without checking its class (PositionalIo checks).
    private static native long pread0(int fd, ByteBuffer buffer, int position, int length, long offset, int flags,
                                      long[] asked);

    private static native long pwrite0(int fd, ByteBuffer buffer, int position, int length, long offset, int flags,
                                       long[] asked);
}

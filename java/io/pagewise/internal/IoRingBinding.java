package io.pagewise.internal;

import java.nio.ByteBuffer;

/**
 * {@link IoRing}'s calls by JNI, into {@code native/io_ring.c}. The FFM twin (JDK 22+) has the same methods. Results
 * are -errno on failure. One thread submits at a time and one reaps (IoRing keeps it so).
 */
final class IoRingBinding {
    private IoRingBinding() {}

    static long open(int entries) {
        return open0(entries);
    }

    static int submit(long ring, int count, int[] ops, int[] fds, ByteBuffer[] buffers, int[] positions, int[] lengths,
                      long[] offsets, int[] flags, long[] tags) {
        return submit0(ring, count, ops, fds, buffers, positions, lengths, offsets, flags, tags);
    }

    static int reap(long ring, int min, long[] tags, int[] results) {
        return reap0(ring, min, tags, results);
    }

    static int close(long ring) {
        return close0(ring);
    }

    private static native long open0(int entries);

    private static native int submit0(long ring, int count, int[] ops, int[] fds, ByteBuffer[] buffers,
                                      int[] positions, int[] lengths, long[] offsets, int[] flags, long[] tags);

    private static native int reap0(long ring, int min, long[] tags, int[] results);

    private static native int close0(long ring);
}

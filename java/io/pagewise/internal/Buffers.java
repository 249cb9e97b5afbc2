package io.pagewise.internal;

import java.nio.ByteBuffer;

/** Helpers for a request held in several buffers: its bytes are the buffers' remaining bytes, in order. */
public final class Buffers {
    private Buffers() {}

    /** {@return the bytes remaining in all the buffers} */
    public static long remaining(ByteBuffer[] buffers) {
        long total = 0;
        for (ByteBuffer buffer : buffers) total += buffer.remaining();
        return total;
    }

    /** {@return true when the bytes of buffer from index from to index to (absolute, positions untouched) are all 0} */
    public static boolean isZero(ByteBuffer buffer, int from, int to) {
        int i = from;
        for (; i + 8 <= to; i += 8) {
            if (buffer.getLong(i) != 0) return false;
        }
        for (; i < to; i++) {
            if (buffer.get(i) != 0) return false;
        }
        return true;
    }

    /** {@return true when every buffer is direct} */
    public static boolean allDirect(ByteBuffer[] buffers) {
        for (ByteBuffer buffer : buffers) {
            if (!buffer.isDirect()) return false;
        }
        return true;
    }

    /** Copies src's remaining bytes into dsts, in order, advancing src and the buffers it fills. */
    public static void scatter(ByteBuffer src, ByteBuffer[] dsts) {
        for (int i = 0; i < dsts.length && src.hasRemaining(); i++) {
            ByteBuffer dst = dsts[i];
            int n = Math.min(src.remaining(), dst.remaining());
            dst.put(dst.position(), src, src.position(), n);
            dst.position(dst.position() + n);
            src.position(src.position() + n);
        }
    }

    /** Copies the next n bytes of srcs, in order, to dst at index, advancing the buffers it takes them from. */
    public static void gather(ByteBuffer[] srcs, ByteBuffer dst, int index, int n) {
        for (int i = 0; i < srcs.length && n > 0; i++) {
            ByteBuffer src = srcs[i];
            int chunk = Math.min(n, src.remaining());
            dst.put(index, src, src.position(), chunk);
            src.position(src.position() + chunk);
            index += chunk;
            n -= chunk;
        }
    }

    /** {@return the buffers' positions}, for {@link #restore} */
    public static int[] positions(ByteBuffer[] buffers) {
        int[] positions = new int[buffers.length];
        for (int i = 0; i < buffers.length; i++) positions[i] = buffers[i].position();
        return positions;
    }

    /** Puts the buffers back at the positions {@link #positions} saved, to try a request again another way. */
    public static void restore(ByteBuffer[] buffers, int[] positions) {
        for (int i = 0; i < buffers.length; i++) buffers[i].position(positions[i]);
    }
}

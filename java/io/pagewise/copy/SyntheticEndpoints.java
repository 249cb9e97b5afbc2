package io.pagewise.copy;

import io.pagewise.Extent;
import java.io.EOFException;
import java.nio.ByteBuffer;
import java.util.List;

/** Endpoints without storage: the sources {@code pattern:SIZE} and {@code zero:SIZE}, the destination {@code null:}. */
public final class SyntheticEndpoints {
    private SyntheticEndpoints() {}

    /**
     * Deterministic non-zero data: every 8-byte word (aligned on the device) holds its own offset, big-endian, as
     * nbdkit's pattern plugin does, so a misplaced block is easy to spot.
     *
     * @param size the source's size in bytes
     * @return the source, named {@code pattern:SIZE}
     */
    public static CopySource pattern(long size) {
        return new CopySource() {
            @Override
            public String name() { return "pattern:" + size; }

            @Override
            public long size() { return size; }

            @Override
            public List<Extent> extents(long offset, long length) {
                return List.of(new Extent(offset, length, false));
            }

            @Override
            public void readFully(ByteBuffer dst, long offset) throws EOFException {
                checkWithin(name(), size, offset, dst);
                long at = offset;
                while (dst.hasRemaining() && (at & 7) != 0) dst.put(patternByte(at++));
                while (dst.remaining() >= 8) {
                    dst.putLong(at);
                    at += 8;
                }
                while (dst.hasRemaining()) dst.put(patternByte(at++));
            }
        };
    }

    private static void checkWithin(String name, long size, long offset, ByteBuffer dst) throws EOFException {
        if (offset + dst.remaining() > size) {
            throw new EOFException(name + " ends at " + size + ", inside the read at " + offset + " (+" + dst.remaining()
                    + ")");
        }
    }

    /** The pattern byte at an offset: a byte of the big-endian word that starts at the offset rounded down to 8. */
    static byte patternByte(long offset) {
        return (byte) ((offset & ~7L) >>> (8 * (7 - (offset & 7))));
    }

    /**
     * All zeros: one hole, never read.
     *
     * @param size the source's size in bytes
     * @return the source, named {@code zero:SIZE}
     */
    public static CopySource zero(long size) {
        return new CopySource() {
            @Override
            public String name() { return "zero:" + size; }

            @Override
            public long size() { return size; }

            @Override
            public List<Extent> extents(long offset, long length) {
                return List.of(new Extent(offset, length, true));
            }

            @Override
            public void readFully(ByteBuffer dst, long offset) throws EOFException {
                checkWithin(name(), size, offset, dst);
                while (dst.hasRemaining()) dst.put((byte) 0);
            }
        };
    }

    /** {@return the destination {@code null:}, which takes everything and keeps nothing} */
    public static CopyDestination discard() {
        return new CopyDestination() {
            @Override
            public String name() { return "null:"; }

            @Override
            public long size() { return Long.MAX_VALUE; }

            @Override
            public void write(ByteBuffer src, long offset) {
                src.position(src.limit());
            }

            @Override
            public void zero(long offset, long length, boolean allocate) {}

            @Override
            public void flush() {}

            @Override
            public boolean startsZeroed() { return true; }
        };
    }
}

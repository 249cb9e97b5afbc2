package io.pagewise.backends;

import io.pagewise.Extent;
import io.pagewise.device.BlockDevice;
import io.pagewise.device.Capabilities;
import io.pagewise.device.Capability;
import io.pagewise.device.ZeroFlag;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Set;

/**
 * Devices without storage, as nbdkit's plugins of the same names: {@code pattern:SIZE} and {@code zero:SIZE}, which
 * are read-only, and {@code null:}, which takes every write and keeps nothing.
 */
public final class SyntheticDevices {
    private SyntheticDevices() {}

    /**
     * Deterministic non-zero data: every 8-byte word (aligned on the device) holds its own offset, big-endian, as
     * nbdkit's pattern plugin does, so a misplaced block is easy to spot. Read-only.
     *
     * @param size the device's size in bytes
     * @return the device, named {@code pattern:SIZE}
     */
    public static BlockDevice pattern(long size) {
        return new Synthetic("pattern:" + size, size, Capabilities.NONE) {
            @Override
            public void readFully(ByteBuffer dst, long offset) {
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

    /**
     * {@return the pattern byte at an offset}: a byte of the big-endian word that starts at the offset rounded down
     * to 8
     *
     * @param offset the offset on the device
     */
    public static byte patternByte(long offset) {
        return (byte) ((offset & ~7L) >>> (8 * (7 - (offset & 7))));
    }

    /**
     * All zeros: one hole, read-only.
     *
     * @param size the device's size in bytes
     * @return the device, named {@code zero:SIZE}
     */
    public static BlockDevice zero(long size) {
        return new Synthetic("zero:" + size, size,
                Capabilities.of(Capability.EXTENTS, Capability.HOLES, Capability.STARTS_ZEROED)) {
            @Override
            public List<Extent> extents(long offset, long length, int maxExtents) {
                return List.of(new Extent(offset, length, true));
            }
        };
    }

    /** {@return the device {@code null:} of {@link Long#MAX_VALUE} bytes, which takes everything and keeps nothing} */
    public static BlockDevice discard() {
        return discard(Long.MAX_VALUE);
    }

    /**
     * A device that takes every write and zeroing and keeps nothing; it reads as zeros.
     *
     * @param size the device's size in bytes
     * @return the device, named {@code null:}
     */
    public static BlockDevice discard(long size) {
        return new Synthetic("null:", size, Capabilities.WRITES.with(Capability.STARTS_ZEROED)) {
            @Override
            public void write(ByteBuffer src, long offset, boolean fua) {
                src.position(src.limit());
            }

            @Override
            public void zero(long offset, long length, Set<ZeroFlag> flags) {}
        };
    }

    /**
     * Reads zeros, refuses writes; the devices above override what they do differently and state what they can do.
     * Each is one value every user shares, so multi-conn holds for all.
     */
    private abstract static class Synthetic implements BlockDevice {
        private final String name;
        private final long size;
        private final Capabilities capabilities;

        Synthetic(String name, long size, Capabilities capabilities) {
            if (size < 0) throw new IllegalArgumentException("negative size: " + size);
            this.name = name;
            this.size = size;
            this.capabilities = capabilities.with(Capability.MULTI_CONN);
        }

        @Override
        public String name() { return name; }

        @Override
        public long size() { return size; }

        @Override
        public void readFully(ByteBuffer dst, long offset) {
            while (dst.hasRemaining()) dst.put((byte) 0);
        }

        @Override
        public Capabilities capabilities() { return capabilities; }

        @Override
        public String toString() { return name; }
    }
}

package io.pagewise.filters;

import io.pagewise.device.BlockDevice;
import io.pagewise.device.Capabilities;
import io.pagewise.device.Capability;
import io.pagewise.device.DeviceException;
import io.pagewise.device.FilterDevice;
import io.pagewise.device.ZeroFlag;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Set;

/**
 * Takes away the device's zeroing, as nbdkit's nozero filter. With {@link Mode#NONE} the export does not offer
 * WRITE_ZEROES, so clients write zeros as data; with {@link Mode#EMULATE} it does, and the filter writes the zeros
 * itself (never trimming, never fast), so the device sees only writes.
 */
public final class NoZeroFilter extends FilterDevice {
    /** What becomes of zeroing. */
    public enum Mode {
        /** Not offered: the capabilities lose {@link Capability#ZERO}. */
        NONE,
        /** Offered, and done by writing zeros in pieces of at most 1 MiB. */
        EMULATE
    }

    private static final int PIECE = 1 << 20;
    private final Mode mode;

    /**
     * A filter over a device.
     *
     * @param device the device whose zeroing to take away
     * @param mode   what to offer instead
     */
    public NoZeroFilter(BlockDevice device, Mode mode) {
        super(device);
        this.mode = java.util.Objects.requireNonNull(mode, "mode");
    }

    @Override
    protected BlockDevice over(BlockDevice view) { return new NoZeroFilter(view, mode); }

    /** Writes zeros (emulate), or refuses with ENOTSUP (none); a fast zero is always refused. */
    @Override
    public void zero(long offset, long length, Set<ZeroFlag> flags) throws IOException {
        if (mode == Mode.NONE || flags.contains(ZeroFlag.FAST)) {
            throw new DeviceException(DeviceException.ENOTSUP, "zeroing " + name() + " is turned off (nozero)");
        }
        ByteBuffer zeros = ByteBuffer.allocate((int) Math.min(PIECE, length));
        for (long done = 0; done < length; ) {
            int n = (int) Math.min(zeros.capacity(), length - done);
            device.write(zeros.clear().limit(n), offset + done, flags.contains(ZeroFlag.FUA));
            done += n;
        }
    }

    /** Never fast zeroing; zeroing only when emulated, over a device that takes the writes. */
    @Override
    public Capabilities capabilities() {
        Capabilities inner = device.capabilities();
        return inner.without(Capability.FAST_ZERO)
                .with(Capability.ZERO, mode == Mode.EMULATE && inner.has(Capability.WRITE));
    }

    @Override
    public String toString() { return device + " (zeroing " + (mode == Mode.NONE ? "off" : "written") + ")"; }
}

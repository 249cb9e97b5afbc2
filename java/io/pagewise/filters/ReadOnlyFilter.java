package io.pagewise.filters;

import io.pagewise.device.BlockDevice;
import io.pagewise.device.Capabilities;
import io.pagewise.device.DeviceException;
import io.pagewise.device.FilterDevice;
import io.pagewise.device.ZeroFlag;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Set;

/**
 * Makes any device read-only, as nbdkit's readonly filter: every change is refused with EPERM and the capabilities
 * lose {@linkplain Capabilities#WRITES writing and all that goes with it}, so the NBD server advertises the export
 * read-only.
 */
public final class ReadOnlyFilter extends FilterDevice {
    /**
     * A read-only view of a device; closing it closes the device.
     *
     * @param device the device to read
     */
    public ReadOnlyFilter(BlockDevice device) {
        super(device);
    }

    @Override
    public void write(ByteBuffer src, long offset, boolean fua) throws IOException { throw refused("write"); }

    @Override
    public void write(ByteBuffer[] srcs, long offset, boolean fua) throws IOException { throw refused("write"); }

    @Override
    public void zero(long offset, long length, Set<ZeroFlag> flags) throws IOException { throw refused("zero"); }

    @Override
    public void trim(long offset, long length, boolean fua) throws IOException { throw refused("trim"); }

    /** Nothing is written through the filter, so nothing needs to be made durable. */
    @Override
    public void flush() {}

    private DeviceException refused(String operation) {
        return new DeviceException(DeviceException.EPERM, operation + " refused: " + name() + " is read-only");
    }

    @Override
    public Capabilities capabilities() { return device.capabilities().without(Capabilities.WRITES); }

    @Override
    protected BlockDevice over(BlockDevice view) { return new ReadOnlyFilter(view); }

    @Override
    public String toString() { return device + " (read-only)"; }
}

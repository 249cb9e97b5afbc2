package io.pagewise.filters;

import io.pagewise.Extent;
import io.pagewise.device.BlockDevice;
import io.pagewise.device.Capabilities;
import io.pagewise.device.Capability;
import io.pagewise.device.FilterDevice;
import java.util.List;

/**
 * Hides the device's map of data and holes, as nbdkit's noextents filter: block status says the whole range is
 * data, and the NBD server does not offer {@code base:allocation}. For clients that misuse the map, or to compare
 * how a copy runs without it.
 */
public final class NoExtentsFilter extends FilterDevice {
    /**
     * A filter over a device.
     *
     * @param device the device whose map to hide
     */
    public NoExtentsFilter(BlockDevice device) {
        super(device);
    }

    @Override
    protected BlockDevice over(BlockDevice view) { return new NoExtentsFilter(view); }

    /** {@return one data run over the whole range}, without asking the device */
    @Override
    public List<Extent> extents(long offset, long length, int maxExtents) {
        return List.of(new Extent(offset, length, false));
    }

    /** {@return the device's capabilities without a map}: no hole shows through, so a reader need not look for one */
    @Override
    public Capabilities capabilities() {
        return device.capabilities().without(Capability.EXTENTS, Capability.HOLES);
    }

    @Override
    public String toString() { return device + " (no extents)"; }
}

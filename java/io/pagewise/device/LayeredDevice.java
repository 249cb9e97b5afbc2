package io.pagewise.device;

import io.pagewise.Extent;
import java.io.IOException;
import java.util.List;

/**
 * A filter that is a layer of its own over the device it wraps, such as a copy-on-write overlay: some ranges it holds
 * itself, the others read through to the device below. The NBD server reports it as qemu reports backing chains, in
 * the meta context {@code qemu:allocation-depth}: 1 for what the outermost layer holds, one more for each layer a
 * range reads through to.
 */
public interface LayeredDevice {
    /**
     * The runs of a range this layer holds and those it reads through, at most maxRuns of them, in order from offset;
     * {@link Extent#hole()} true means read through to the wrapped device.
     *
     * @param offset  the start of the range
     * @param length  the length of the range
     * @param maxRuns the most runs the caller will use, at least 1
     * @return at least one run, covering a prefix of the range or all of it
     * @throws IOException when the layer's map cannot be read
     */
    List<Extent> ownRuns(long offset, long length, int maxRuns) throws IOException;
}

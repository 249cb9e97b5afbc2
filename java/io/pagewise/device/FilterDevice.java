package io.pagewise.device;

import io.pagewise.Extent;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Set;

/**
 * A device that passes every call to another, as {@link java.io.FilterInputStream} does for streams: a filter
 * extends it and overrides what it changes. Closing the filter closes the device it wraps.
 */
public abstract class FilterDevice implements BlockDevice {
    /** The device calls go to. */
    protected final BlockDevice device;

    /**
     * A filter over a device.
     *
     * @param device the device to pass calls to
     */
    protected FilterDevice(BlockDevice device) {
        this.device = java.util.Objects.requireNonNull(device, "device");
    }

    /** {@return the device this filter wraps} */
    public BlockDevice wrapped() { return device; }

    @Override
    public String name() { return device.name(); }

    @Override
    public long size() throws IOException { return device.size(); }

    @Override
    public void readFully(ByteBuffer dst, long offset) throws IOException { device.readFully(dst, offset); }

    @Override
    public void readFully(ByteBuffer[] dsts, long offset) throws IOException { device.readFully(dsts, offset); }

    @Override
    public void write(ByteBuffer src, long offset, boolean fua) throws IOException { device.write(src, offset, fua); }

    @Override
    public void write(ByteBuffer[] srcs, long offset, boolean fua) throws IOException { device.write(srcs, offset, fua); }

    @Override
    public void zero(long offset, long length, Set<ZeroFlag> flags) throws IOException {
        device.zero(offset, length, flags);
    }

    @Override
    public void trim(long offset, long length, boolean fua) throws IOException { device.trim(offset, length, fua); }

    @Override
    public void flush() throws IOException { device.flush(); }

    /**
     * This filter's own {@link #flush()}, so that a filter which does more on a flush (a copy-on-write overlay, a
     * dirty bitmap) does it at shutdown too; below it, the flush at shutdown is an ordinary flush.
     */
    @Override
    public void flushAtShutdown() throws IOException { flush(); }

    @Override
    public List<Extent> extents(long offset, long length, int maxExtents) throws IOException {
        return device.extents(offset, length, maxExtents);
    }

    @Override
    public void cache(long offset, long length) throws IOException { device.cache(offset, length); }

    /** {@inheritDoc} A filter passes on its device's; one that changes what the device can do overrides this. */
    @Override
    public Capabilities capabilities() { return device.capabilities(); }

    @Override
    public int minimumBlockSize() { return device.minimumBlockSize(); }

    @Override
    public int preferredBlockSize() { return device.preferredBlockSize(); }

    @Override
    public int maximumBlockSize() { return device.maximumBlockSize(); }

    /**
     * {@inheritDoc} A filter passes the call on: when its device returns a view of its own, the filter returns
     * {@link #over(BlockDevice)} of that view, so that a per-connection device keeps its place in a stack.
     */
    @Override
    public BlockDevice forConnection() throws IOException {
        BlockDevice view = device.forConnection();
        return view == device ? this : over(view);
    }

    /**
     * {@return this filter, with the state it shares (counters, overlays, limits), over another device}: the
     * per-connection view of the device it wraps. The default returns {@code this}, which leaves the view unused: a
     * filter that keeps no per-call state in its fields should override it with a new instance over the view.
     *
     * @param view what the wrapped device returned from {@link BlockDevice#forConnection()}
     */
    protected BlockDevice over(BlockDevice view) { return this; }

    @Override
    public void close() throws IOException { device.close(); }

    @Override
    public String toString() { return device.toString(); }
}

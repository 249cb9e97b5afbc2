package io.pagewise.filters;

import io.pagewise.Extent;
import io.pagewise.backup.DirtyBitmap;
import io.pagewise.device.BlockDevice;
import io.pagewise.device.ChangeTracker;
import io.pagewise.device.FilterDevice;
import io.pagewise.device.ZeroFlag;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Set;

/**
 * A device whose writes, zeroes and trims a {@link DirtyBitmap} records, each before it is made. Closing the filter
 * closes the device first, so that the image's modification time is final, then the bitmap. As a
 * {@link ChangeTracker} it offers the bitmap by its name: the NBD server serves it as {@code qemu:dirty-bitmap:NAME}.
 */
public final class DirtyBitmapFilter extends FilterDevice implements ChangeTracker {
    private final DirtyBitmap bitmap;

    /**
     * A filter that records into bitmap; it closes the bitmap when it is closed.
     *
     * @param device the device whose changes are recorded
     * @param bitmap the bitmap, of the device's size
     * @throws IOException when the device's size cannot be read
     * @throws IllegalArgumentException when the bitmap is not of the device's size
     */
    public DirtyBitmapFilter(BlockDevice device, DirtyBitmap bitmap) throws IOException {
        super(device);
        if (bitmap.imageSize() != device.size()) {
            throw new IllegalArgumentException("dirty bitmap " + bitmap.name() + " records " + bitmap.imageSize()
                    + " bytes, but " + device.name() + " has " + device.size());
        }
        this.bitmap = bitmap;
    }

    /** {@return the bitmap that records the changes} */
    public DirtyBitmap bitmap() {
        return bitmap;
    }

    @Override
    public String bitmapName() {
        return bitmap.name();
    }

    /** {@inheritDoc} The bitmap's runs: unchanged ranges are holes, and an invalid bitmap reports everything changed. */
    @Override
    public List<Extent> changedRuns(long offset, long length, int maxRuns) {
        return bitmap.runs(offset, length, maxRuns);
    }

    @Override
    public void write(ByteBuffer src, long offset, boolean fua) throws IOException {
        bitmap.record(offset, src.remaining(), () -> device.write(src, offset, fua));
    }

    @Override
    public void write(ByteBuffer[] srcs, long offset, boolean fua) throws IOException {
        long length = 0;
        for (ByteBuffer src : srcs) length += src.remaining();
        bitmap.record(offset, length, () -> device.write(srcs, offset, fua));
    }

    @Override
    public void zero(long offset, long length, Set<ZeroFlag> flags) throws IOException {
        bitmap.record(offset, length, () -> device.zero(offset, length, flags));
    }

    @Override
    public void trim(long offset, long length, boolean fua) throws IOException {
        bitmap.record(offset, length, () -> device.trim(offset, length, fua));
    }

    @Override
    public void close() throws IOException {
        try {
            device.close();
        } finally {
            bitmap.close();
        }
    }
}

package io.pagewise;

import io.pagewise.internal.IoVector;
import io.pagewise.internal.RawFile;
import io.pagewise.internal.Space;
import io.pagewise.policy.CachePolicy;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * The space of a {@link StorageFile}'s file: zeroing, trimming and the map of data and holes, for ranges the
 * StorageFile has checked and while it holds the file open.
 */
final class FileSpace {
    private static final int ZERO_CHUNK = 1 << 20;

    private final RawFile file;
    private final CachePolicy policy;
    /**
     * What fallocate takes ranges in: a block device's logical block, whose multiples alone the kernel zeroes or
     * discards (EINVAL otherwise), and 1 for a file.
     */
    private final long unit;

    FileSpace(RawFile file, CachePolicy policy) {
        this.file = file;
        this.policy = policy;
        this.unit = file.isBlockDevice() ? Math.max(1, file.alignment().logicalBlockSize()) : 1;
    }

    /** {@link StorageFile#allocate} of a non-empty range: false, with nothing changed, where the file cannot. */
    boolean allocate(long offset, long length) throws IOException {
        return !file.isBlockDevice() && policy.fallocate(Space.ALLOCATE, offset, length);
    }

    /** {@link StorageFile#zero} of a non-empty range. */
    void zero(long offset, long length, boolean mayTrim) throws IOException {
        long end = offset + length;
        long start = wholeUnitsFrom(offset, end);
        long stop = Math.max(start, end - end % unit);
        // The partial units at the edges of a block device's range are written; the whole ones between, zeroed.
        if (start > offset) writeZeros(offset, start - offset);
        if (stop > start) zeroWholeUnits(start, stop - start, mayTrim);
        if (end > stop) writeZeros(stop, end - stop);
    }

    /** {@link StorageFile#trim} of a non-empty range. */
    void trim(long offset, long length) throws IOException {
        long end = Math.min(offset + length, file.size());
        // A block device discards whole logical blocks only: the partial ones at the edges keep their data.
        long start = wholeUnitsFrom(offset, end);
        end -= end % unit;
        if (end > start) changeSpace(Space.PUNCH_HOLE, start, end - start);
    }

    /** {@link StorageFile#extents(long, long, int)}: at most two SEEK_DATA/SEEK_HOLE calls per run returned. */
    List<Extent> extents(long offset, long length, int maxExtents) throws IOException {
        long end = Math.min(offset + length, file.size());
        List<Extent> result = new ArrayList<>(Math.min(maxExtents, 16));
        if (end <= offset) return result;
        if (file.isBlockDevice()) {
            result.add(new Extent(offset, end - offset, false));
            return result;
        }
        long at = offset;
        while (at < end && result.size() < maxExtents) {
            long data = file.seek(at, Space.SEEK_DATA);
            if (data < 0 || data >= end) {
                result.add(new Extent(at, end - at, true));
                break;
            }
            if (data > at) {
                result.add(new Extent(at, data - at, true));
                if (result.size() == maxExtents) break;
            }
            long hole = file.seek(data, Space.SEEK_HOLE);
            long dataEnd = hole < 0 ? end : Math.min(hole, end);
            result.add(new Extent(data, dataEnd - data, false));
            at = dataEnd;
        }
        return result;
    }

    /** The first multiple of {@link #unit} at or after offset, but at most end. */
    private long wholeUnitsFrom(long offset, long end) {
        long head = (unit - offset % unit) % unit;
        return head >= end - offset ? end : offset + head;
    }

    private void zeroWholeUnits(long offset, long length, boolean mayTrim) throws IOException {
        boolean done = false;
        if (mayTrim && offset + length <= file.size()) done = changeSpace(Space.PUNCH_HOLE, offset, length);
        if (!done) done = changeSpace(Space.ZERO_RANGE, offset, length);
        if (!done) writeZeros(offset, length); // writes, durable as the mode's writes are
    }

    /**
     * fallocate through the policy. In the modes where every write is durable when it returns, zeroing and
     * trimming are too: fallocate alone changes only what the kernel holds, so the file is synced after it.
     */
    private boolean changeSpace(int spaceMode, long offset, long length) throws IOException {
        boolean done = policy.fallocate(spaceMode, offset, length);
        if (done && policy.mode().syncsEveryWrite()) file.dataSync();
        return done;
    }

    private void writeZeros(long offset, long length) throws IOException {
        ByteBuffer zeros = ByteBuffer.allocateDirect((int) Math.min(length, ZERO_CHUNK));
        for (long done = 0; done < length; ) {
            int chunk = (int) Math.min(zeros.capacity(), length - done);
            policy.write(IoVector.of(zeros.clear().limit(chunk), offset + done), false);
            done += chunk;
        }
    }
}

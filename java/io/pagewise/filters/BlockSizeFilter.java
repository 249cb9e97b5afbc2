package io.pagewise.filters;

import io.pagewise.Extent;
import io.pagewise.device.BlockDevice;
import io.pagewise.device.FilterDevice;
import io.pagewise.device.ZeroFlag;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReadWriteLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * Makes every call the device gets aligned to a minimum block and no longer than a maximum, whatever the caller
 * asks, as nbdkit's blocksize filter, and advertises those sizes ({@link #minimumBlockSize()},
 * {@link #preferredBlockSize()}, {@link #maximumBlockSize()}), which the NBD server passes on to clients.
 *
 * <ul>
 * <li>A read or write longer than {@code maxdata} is split into calls of at most that many bytes; a zero or trim
 *     longer than {@code maxlen} into calls of at most that.</li>
 * <li>The unaligned head and tail of a read are read as whole blocks and copied out. Those of a write or a zero are
 *     read, changed and written back whole (read-modify-write); those of a trim are left alone (a trim promises
 *     nothing about what reads).</li>
 * <li>Read-modify-write holds a lock that aligned writes, zeroes and trims share, so it runs alone: concurrent
 *     unaligned writes to one block, or an aligned write beside one, cannot undo each other.</li>
 * <li>The size is rounded down to a whole block, as nbdkit does: a tail shorter than a block is not served.</li>
 * </ul>
 */
public final class BlockSizeFilter extends FilterDevice {
    /** The largest read or write passed on in one call unless told: 64 MiB, as nbdkit's {@code maxdata}. */
    public static final int DEFAULT_MAXDATA = 64 << 20;

    private final int minblock;
    private final int maxdata;
    private final long maxlen;
    private final long size;
    private final ReadWriteLock rmw;

    /**
     * A filter over a device.
     *
     * @param device   the device to pass calls to
     * @param minblock the alignment and smallest call, a power of two up to 64 KiB; raised to the device's own
     *                 minimum when that is larger
     * @param maxdata  the longest read or write passed on, a multiple of the minimum block
     * @param maxlen   the longest zero or trim passed on, a multiple of the minimum block
     * @throws IllegalArgumentException when a size is not as described
     * @throws IOException              when the device's size cannot be read
     */
    public BlockSizeFilter(BlockDevice device, int minblock, int maxdata, long maxlen) throws IOException {
        super(device);
        if (minblock < 1 || minblock > 65536 || Integer.bitCount(minblock) != 1) {
            throw new IllegalArgumentException("filter blocksize: minblock=" + minblock
                    + ": must be a power of two from 1 to 64K");
        }
        this.minblock = Math.max(minblock, device.minimumBlockSize());
        if (maxdata < this.minblock || maxdata % this.minblock != 0) {
            throw new IllegalArgumentException("filter blocksize: maxdata=" + maxdata + ": must be a multiple of the "
                    + "minimum block, " + this.minblock);
        }
        if (maxlen < this.minblock || maxlen % this.minblock != 0) {
            throw new IllegalArgumentException("filter blocksize: maxlen=" + maxlen + ": must be a multiple of the "
                    + "minimum block, " + this.minblock);
        }
        this.maxdata = Math.min(maxdata, alignDown(device.maximumBlockSize(), this.minblock, maxdata));
        this.maxlen = maxlen;
        this.size = device.size() / this.minblock * this.minblock;
        this.rmw = new ReentrantReadWriteLock();
    }

    private static int alignDown(int value, int block, int otherwise) {
        int aligned = value / block * block;
        return aligned == 0 ? otherwise : aligned;
    }

    private BlockSizeFilter(BlockSizeFilter shared, BlockDevice view) {
        super(view);
        this.minblock = shared.minblock;
        this.maxdata = shared.maxdata;
        this.maxlen = shared.maxlen;
        this.size = shared.size;
        this.rmw = shared.rmw;
    }

    @Override
    protected BlockDevice over(BlockDevice view) { return new BlockSizeFilter(this, view); }

    /** {@return the device's size rounded down to a whole minimum block} */
    @Override
    public long size() { return size; }

    @Override
    public int minimumBlockSize() { return minblock; }

    @Override
    public int preferredBlockSize() { return Math.min(maxdata, Math.max(minblock, device.preferredBlockSize())); }

    @Override
    public int maximumBlockSize() { return maxdata; }

    private long down(long offset) { return offset / minblock * minblock; }

    private long up(long offset) { return (offset + minblock - 1) / minblock * minblock; }

    @Override
    public void readFully(ByteBuffer dst, long offset) throws IOException {
        long end = offset + dst.remaining();
        for (long at = offset; at < end; ) {
            int n = (int) (pieceEnd(at, end, maxdata) - at);
            ByteBuffer part = dst.slice(dst.position(), n);
            if (at % minblock == 0 && n % minblock == 0) {
                device.readFully(part, at);
            } else {
                ByteBuffer block = ByteBuffer.allocate(minblock);
                device.readFully(block, down(at));
                part.put(block.position((int) (at - down(at))).limit((int) (at - down(at)) + n));
            }
            dst.position(dst.position() + n);
            at += n;
        }
    }

    /**
     * The end of the next call from at: the end of at's block when at is unaligned or the request ends inside
     * that block, else the last block boundary before end, at most longest bytes on.
     */
    private long pieceEnd(long at, long end, long longest) {
        if (at % minblock != 0 || end - at < minblock) return Math.min(end, down(at) + minblock);
        return Math.min(down(end), at + longest);
    }

    @Override
    public void readFully(ByteBuffer[] dsts, long offset) throws IOException {
        for (ByteBuffer dst : dsts) {
            int n = dst.remaining();
            readFully(dst, offset);
            offset += n;
        }
    }

    @Override
    public void write(ByteBuffer src, long offset, boolean fua) throws IOException {
        long end = offset + src.remaining();
        for (long at = offset; at < end; ) {
            int n = (int) (pieceEnd(at, end, maxdata) - at);
            ByteBuffer part = src.slice(src.position(), n);
            long from = at;
            if (at % minblock == 0 && n % minblock == 0) {
                locked(rmw.readLock(), () -> device.write(part, from, fua));
            } else {
                locked(rmw.writeLock(), () -> modify(from, part, fua));
            }
            src.position(src.position() + n);
            at += n;
        }
    }

    @Override
    public void write(ByteBuffer[] srcs, long offset, boolean fua) throws IOException {
        for (ByteBuffer src : srcs) {
            int n = src.remaining();
            write(src, offset, fua);
            offset += n;
        }
    }

    /** Read-modify-write of the block holding [at, at + part.remaining()). */
    private void modify(long at, ByteBuffer part, boolean fua) throws IOException {
        long start = down(at);
        ByteBuffer block = ByteBuffer.allocate(minblock);
        device.readFully(block, start);
        block.position((int) (at - start));
        block.put(part);
        device.write(block.clear(), start, fua);
    }

    @Override
    public void zero(long offset, long length, Set<ZeroFlag> flags) throws IOException {
        long end = offset + length;
        boolean fua = flags.contains(ZeroFlag.FUA);
        for (long at = offset; at < end; ) {
            long pieceEnd = pieceEnd(at, end, maxlen);
            long n = pieceEnd - at;
            long from = at;
            if (at % minblock == 0 && n % minblock == 0) {
                locked(rmw.readLock(), () -> device.zero(from, n, flags));
            } else {
                ByteBuffer zeros = ByteBuffer.allocate((int) n);
                locked(rmw.writeLock(), () -> modify(from, zeros, fua));
            }
            at = pieceEnd;
        }
    }

    /** Only the whole blocks of the range are trimmed, in calls of at most maxlen. */
    @Override
    public void trim(long offset, long length, boolean fua) throws IOException {
        long end = down(offset + length);
        for (long at = up(offset); at < end; ) {
            long n = Math.min(end - at, maxlen);
            long from = at;
            locked(rmw.readLock(), () -> device.trim(from, n, fua));
            at += n;
        }
    }

    @Override
    public List<Extent> extents(long offset, long length, int maxExtents) throws IOException {
        List<Extent> out = new ArrayList<>();
        for (Extent e : device.extents(offset, Math.min(length, size - offset), maxExtents)) {
            long end = Math.min(e.end(), size);
            if (end > e.offset()) out.add(new Extent(e.offset(), end - e.offset(), e.hole()));
        }
        return out.isEmpty() ? List.of(new Extent(offset, length, false)) : out;
    }

    /** The range rounded out to whole blocks, in calls of at most maxlen. */
    @Override
    public void cache(long offset, long length) throws IOException {
        long end = up(offset + length);
        for (long at = down(offset); at < end; ) {
            long n = Math.min(end - at, maxlen);
            device.cache(at, n);
            at += n;
        }
    }

    /** A call to make with a lock held. */
    private interface LockedCall {
        void run() throws IOException;
    }

    private static void locked(Lock lock, LockedCall call) throws IOException {
        lock.lock();
        try {
            call.run();
        } finally {
            lock.unlock();
        }
    }

    @Override
    public String toString() { return device + " (blocks of " + minblock + " to " + maxdata + " bytes)"; }
}

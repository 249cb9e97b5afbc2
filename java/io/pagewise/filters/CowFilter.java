package io.pagewise.filters;

import io.pagewise.CacheMode;
import io.pagewise.Extent;
import io.pagewise.StorageFile;
import io.pagewise.device.BlockDevice;
import io.pagewise.device.Capabilities;
import io.pagewise.device.Capability;
import io.pagewise.device.FilterDevice;
import io.pagewise.device.LayeredDevice;
import io.pagewise.device.ZeroFlag;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * A copy-on-write overlay over any device, as nbdkit's cow filter and {@code qemu-nbd --snapshot}: writes, zeroes
 * and trims go to a sparse overlay file, <b>the device underneath (the base) is never written</b>, and reads see the
 * overlay where it holds a block and the base elsewhere. The export is writable even over a read-only base.
 *
 * <pre>{@code
 * try (CowFilter scratch = CowFilter.temporary(FileDevice.open(image, CacheMode.WRITEBACK), CowFilter.DEFAULT_BLOCK_SIZE)) {
 *     // serve or write scratch; image stays as it was
 * }
 * }</pre>
 *
 * <p>The overlay works in blocks of {@link #blockSize()} bytes. A write that covers part of a block the overlay does
 * not hold yet reads that block from the base, merges and writes it whole (read-modify-write); every change locks the
 * blocks it touches, so two writers to different bytes of one block both keep their bytes. A zero or trim makes the
 * whole blocks it covers read as zeros (and punches them out of the overlay) and writes zeros into the parts of
 * blocks at its edges. {@link #extents} merges both maps: a block the overlay holds is data, a zeroed or trimmed one
 * is a hole, and the rest is whatever the base says, so the base's holes stay holes until written.
 *
 * <p><b>Keeping the overlay</b> ({@link #open}): the overlay file then also holds the map of which blocks it has, after
 * the blocks, and {@link #flush()} (and FUA, and close) makes the written blocks and then that map durable. Opening
 * the same file again over the same base continues where it stopped: the blocks written before the last flush are
 * there, later ones may be lost, as for any disk. The overlay belongs to its base: reopening it checks the base's size
 * and the block size, but not the base's contents, so a base changed in between shows through wherever the overlay
 * holds no block. Only one filter may use an overlay file at a time. Without a file ({@link #temporary}) the overlay
 * is a temporary file that is removed as soon as it is open, so nothing is left even if the JVM dies; flush then does
 * nothing, since nothing of it outlives the filter.
 */
public final class CowFilter extends FilterDevice implements LayeredDevice {
    /** The block size unless one is given: 64 KiB, as nbdkit's cow filter. */
    public static final int DEFAULT_BLOCK_SIZE = 64 * 1024;

    private final StorageFile overlay;
    private final CowMap map;
    private final boolean kept;
    private final boolean fresh;
    private final long size;
    private final int blockSize;
    private final BlockLocks locks;

    private CowFilter(BlockDevice base, StorageFile overlay, CowMap map, boolean kept, boolean fresh) throws IOException {
        super(base);
        this.overlay = overlay;
        this.map = map;
        this.kept = kept;
        this.fresh = fresh;
        this.size = base.size();
        this.blockSize = map.blockSize();
        this.locks = new BlockLocks(1024);
    }

    /** The same overlay, map and locks over a per-connection view of the base. */
    private CowFilter(CowFilter shared, BlockDevice view) {
        super(view);
        this.overlay = shared.overlay;
        this.map = shared.map;
        this.kept = shared.kept;
        this.fresh = shared.fresh;
        this.size = shared.size;
        this.blockSize = shared.blockSize;
        this.locks = shared.locks;
    }

    @Override
    protected BlockDevice over(BlockDevice view) { return new CowFilter(this, view); }

    /**
     * An overlay in a temporary file (in {@code java.io.tmpdir}), removed as soon as it is open.
     *
     * @param base      the device to read through; never written
     * @param blockSize the overlay's block size: a power of two from 4 KiB to 16 MiB
     * @return the filter; closing it closes the base
     * @throws IOException when the overlay cannot be made
     */
    public static CowFilter temporary(BlockDevice base, int blockSize) throws IOException {
        checkBlockSize(blockSize);
        Path path = Files.createTempFile("pagewise-cow-", ".overlay");
        StorageFile file = null;
        try {
            file = StorageFile.open(path, CacheMode.WRITEBACK, StandardOpenOption.READ, StandardOpenOption.WRITE);
            Files.delete(path);
            return new CowFilter(base, file, CowMap.create(file, base.size(), blockSize), false, true);
        } catch (IOException | RuntimeException e) {
            if (file != null) file.close();
            Files.deleteIfExists(path);
            throw e;
        }
    }

    /**
     * An overlay kept in a file: created when the file does not exist or is empty, else reopened (the file must be
     * an overlay this filter made over a base of the same size).
     *
     * @param base      the device to read through; never written
     * @param path      the overlay file
     * @param blockSize the block size of a new overlay, a power of two from 4 KiB to 16 MiB; an existing overlay
     *                  keeps its own, and 0 accepts it whatever it is, while another value must match it
     * @return the filter; closing it makes the overlay durable and closes it and the base
     * @throws IllegalArgumentException when the file is not such an overlay, or its block size is another
     * @throws IOException              when the file cannot be opened, created or read
     */
    public static CowFilter open(BlockDevice base, Path path, int blockSize) throws IOException {
        if (blockSize != 0) checkBlockSize(blockSize);
        StorageFile file = StorageFile.open(path, CacheMode.WRITEBACK, StandardOpenOption.READ,
                StandardOpenOption.WRITE, StandardOpenOption.CREATE);
        try {
            boolean fresh = file.size() == 0;
            CowMap map = fresh ? CowMap.create(file, base.size(), blockSize == 0 ? DEFAULT_BLOCK_SIZE : blockSize)
                    : CowMap.load(file, base.size(), blockSize);
            if (fresh) file.flush();
            return new CowFilter(base, file, map, true, fresh);
        } catch (IOException | RuntimeException e) {
            file.close();
            throw e;
        }
    }

    private static void checkBlockSize(int blockSize) {
        if (blockSize < 4096 || blockSize > (16 << 20) || Integer.bitCount(blockSize) != 1) {
            throw new IllegalArgumentException("filter cow: blocksize=" + blockSize
                    + ": must be a power of two from 4096 to 16M");
        }
    }

    /** {@return the overlay's block size in bytes} */
    public int blockSize() { return blockSize; }

    /** {@return the overlay file, or null for a temporary overlay} */
    public Path overlay() { return kept ? overlay.path() : null; }

    /** {@return the blocks the overlay holds data for} */
    public long blocksWritten() { return map.count(CowMap.DATA); }

    /** {@return the blocks zeroed or trimmed through the filter, which read as zeros} */
    public long blocksZeroed() { return map.count(CowMap.ZERO); }

    @Override
    public void readFully(ByteBuffer dst, long offset) throws IOException {
        long end = offset + dst.remaining();
        for (long at = offset; at < end; ) {
            byte state = map.get(at / blockSize);
            long runEnd = runEnd(at, end, state);
            ByteBuffer part = dst.slice(dst.position(), (int) (runEnd - at));
            if (state == CowMap.DATA) {
                overlay.readFully(part, at);
            } else if (state == CowMap.ZERO) {
                while (part.hasRemaining()) part.put((byte) 0);
            } else {
                device.readFully(part, at);
            }
            dst.position(dst.position() + (int) (runEnd - at));
            at = runEnd;
        }
    }

    /** The end of the run of blocks in one state from at, at most end. */
    private long runEnd(long at, long end, byte state) {
        long next = Math.min(end, (at / blockSize + 1) * blockSize);
        while (next < end && map.get(next / blockSize) == state) next = Math.min(end, next + blockSize);
        return next;
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
        int length = src.remaining();
        if (length == 0) return;
        BlockLocks.Held held = locks.lock(offset / blockSize, (offset + length - 1) / blockSize);
        try {
            change(offset, length, src);
        } finally {
            held.unlock();
        }
        src.position(src.limit());
        if (fua) flush();
    }

    @Override
    public void write(ByteBuffer[] srcs, long offset, boolean fua) throws IOException {
        for (ByteBuffer src : srcs) {
            int n = src.remaining();
            write(src, offset, false);
            offset += n;
        }
        if (fua) flush();
    }

    /**
     * Writes src (or zeros, for null) over [offset, offset + length), with the blocks locked: the whole blocks
     * and the blocks the overlay holds already are written directly, the others merged with what they read as.
     */
    private void change(long offset, long length, ByteBuffer src) throws IOException {
        long end = offset + length;
        long runStart = -1;
        for (long at = offset; at < end; ) {
            long block = at / blockSize;
            long blockStart = block * blockSize;
            long blockEnd = Math.min(blockStart + blockSize, size);
            long partEnd = Math.min(end, blockEnd);
            boolean whole = at == blockStart && partEnd == blockEnd;
            if (whole || map.get(block) == CowMap.DATA) {
                if (runStart < 0) runStart = at;
            } else {
                if (runStart >= 0) writeDirect(runStart, at, src, offset);
                runStart = -1;
                merge(block, blockStart, blockEnd, at, partEnd, src, offset);
            }
            at = partEnd;
        }
        if (runStart >= 0) writeDirect(runStart, end, src, offset);
    }

    /** Writes [from, to) of the request into the overlay as it is, then marks its blocks as held. */
    private void writeDirect(long from, long to, ByteBuffer src, long offset) throws IOException {
        if (src != null) {
            overlay.write(src.slice(src.position() + (int) (from - offset), (int) (to - from)), from);
        } else {
            overlay.zero(from, to - from, false);
        }
        for (long b = from / blockSize; b <= (to - 1) / blockSize; b++) map.set(b, CowMap.DATA);
    }

    /** Read-modify-write of one block the overlay does not hold, for the part [from, to) of the request. */
    private void merge(long block, long blockStart, long blockEnd, long from, long to, ByteBuffer src, long offset)
            throws IOException {
        byte state = map.get(block);
        if (src == null && state == CowMap.ZERO) return;
        ByteBuffer whole = ByteBuffer.allocate((int) (blockEnd - blockStart));
        if (state == CowMap.ABSENT) device.readFully(whole, blockStart);
        whole.clear().position((int) (from - blockStart)).limit((int) (to - blockStart));
        if (src != null) {
            whole.put(src.slice(src.position() + (int) (from - offset), (int) (to - from)));
        } else {
            while (whole.hasRemaining()) whole.put((byte) 0);
        }
        overlay.write(whole.clear(), blockStart);
        map.set(block, CowMap.DATA);
    }

    /** The whole blocks of the range read as zeros, and its edges are written with zeros. */
    @Override
    public void zero(long offset, long length, Set<ZeroFlag> flags) throws IOException {
        if (length == 0) return;
        long end = offset + length;
        long firstWhole = (offset + blockSize - 1) / blockSize;
        long wholeEnd = end == size ? (size + blockSize - 1) / blockSize : end / blockSize; // exclusive
        BlockLocks.Held held = locks.lock(offset / blockSize, (end - 1) / blockSize);
        try {
            if (firstWhole >= wholeEnd) {
                change(offset, length, null);
            } else {
                long wholeStart = firstWhole * blockSize;
                long wholeStop = Math.min(wholeEnd * blockSize, size);
                if (offset < wholeStart) change(offset, wholeStart - offset, null);
                for (long b = firstWhole; b < wholeEnd; b++) map.set(b, CowMap.ZERO);
                overlay.trim(wholeStart, wholeEnd * blockSize - wholeStart);
                if (wholeStop < end) change(wholeStop, end - wholeStop, null);
            }
        } finally {
            held.unlock();
        }
        if (flags.contains(ZeroFlag.FUA)) flush();
    }

    /** As a zero: trimmed ranges read as zeros, which the base never sees. */
    @Override
    public void trim(long offset, long length, boolean fua) throws IOException {
        zero(offset, length, fua ? Set.of(ZeroFlag.MAY_TRIM, ZeroFlag.FUA) : ZeroFlag.TRIM);
    }

    /**
     * Makes the overlay's blocks and then its map durable, for a kept overlay; does nothing for a temporary one.
     * The map written is the one from before the blocks were synced, so it never names a block whose data is not.
     */
    @Override
    public void flush() throws IOException {
        if (!kept) return;
        CowMap.Snapshot snapshot = map.snapshot();
        overlay.flush();
        map.store(overlay, snapshot);
        overlay.flush();
    }

    @Override
    public List<Extent> extents(long offset, long length, int maxExtents) throws IOException {
        List<Extent> out = new ArrayList<>();
        long end = offset + length;
        for (long at = offset; at < end && out.size() < maxExtents; ) {
            byte state = map.get(at / blockSize);
            long runEnd = runEnd(at, end, state);
            if (state != CowMap.ABSENT) {
                add(out, at, runEnd, state == CowMap.ZERO);
                at = runEnd;
                continue;
            }
            List<Extent> base = device.capabilities().has(Capability.EXTENTS)
                    ? device.extents(at, runEnd - at, maxExtents - out.size())
                    : List.of();
            if (base.isEmpty()) base = List.of(new Extent(at, runEnd - at, false));
            for (Extent e : base) {
                long e0 = Math.max(e.offset(), at);
                long e1 = Math.min(e.end(), runEnd);
                if (e1 > e0) add(out, e0, e1, e.hole());
            }
            long covered = out.isEmpty() ? at : out.get(out.size() - 1).end();
            at = covered > at ? covered : runEnd;
        }
        return out;
    }

    /** What the overlay holds (written or zeroed blocks) and what reads through to the base, for allocation depth. */
    @Override
    public List<Extent> ownRuns(long offset, long length, int maxRuns) {
        List<Extent> out = new ArrayList<>();
        long end = offset + length;
        for (long at = offset; at < end && out.size() < maxRuns; ) {
            byte state = map.get(at / blockSize);
            long runEnd = runEnd(at, end, state);
            add(out, at, runEnd, state == CowMap.ABSENT);
            at = runEnd;
        }
        return out;
    }

    private static void add(List<Extent> out, long from, long to, boolean hole) {
        Extent last = out.isEmpty() ? null : out.get(out.size() - 1);
        if (last != null && last.hole() == hole && last.end() == from) {
            out.set(out.size() - 1, new Extent(last.offset(), to - last.offset(), hole));
        } else {
            out.add(new Extent(from, to - from, hole));
        }
    }

    /**
     * Everything the overlay does, over whatever the base can do: writes of every kind and a map of holes. One
     * overlay and one map serve every connection, so a flush through one covers the writes of all. The device reads
     * as zeros as opened only when the base does and the overlay is new.
     */
    @Override
    public Capabilities capabilities() {
        Capabilities base = device.capabilities();
        return base.with(Capabilities.WRITES)
                .with(Capability.EXTENTS, Capability.HOLES, Capability.MULTI_CONN)
                .with(Capability.STARTS_ZEROED, fresh && base.has(Capability.STARTS_ZEROED));
    }

    @Override
    public int preferredBlockSize() { return Math.max(blockSize, device.preferredBlockSize()); }

    /** Makes a kept overlay durable, then closes it and the base. */
    @Override
    public void close() throws IOException {
        try {
            flush();
        } finally {
            try {
                overlay.close();
            } finally {
                device.close();
            }
        }
    }

    @Override
    public String toString() {
        return device + " (copy-on-write in " + (kept ? overlay.path() : "a temporary overlay") + ")";
    }
}

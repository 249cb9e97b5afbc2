package io.pagewise.policy;

import io.pagewise.CacheMode;
import io.pagewise.internal.Advice;
import io.pagewise.internal.BufferPool;
import io.pagewise.internal.Buffers;
import io.pagewise.internal.Errno;
import io.pagewise.internal.FileDescriptors;
import io.pagewise.internal.IoVector;
import io.pagewise.internal.Mincore;
import io.pagewise.internal.NativeRawFile;
import io.pagewise.internal.RawFile;
import io.pagewise.internal.Space;
import io.pagewise.system.Alignment;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.locks.StampedLock;

/**
 * O_DIRECT I/O (DIRECTSYNC adds O_DSYNC) that accepts any offset, length and buffers. An aligned request (offset,
 * and every buffer of the vector direct with an aligned address and length) goes straight to the kernel, one
 * preadv/pwritev; anything else goes through aligned bounce buffers, one chunk at a time, with read-modify-write
 * of the partial blocks at the edges.
 *
 * <p>Writes go by Linux AIO, each submitted and waited for by its thread: ext4 runs an O_DIRECT write into a hole
 * under the exclusive inode lock, and a synchronous one holds it until the disk is done, so writes from many threads
 * into a sparse file would reach the disk one at a time; a submitted write holds it only while it is submitted.
 * A write over allocated data goes by pwritev instead ({@link #overwrites}): ext4 runs that one under the shared
 * lock, and a submitted write's completion comes through a kernel worker, which halved 4 KiB overwrites.
 *
 * <p>Two writers can share an edge block, and a read-modify-write of a block must not undo another write to it, so
 * every write passes a {@link BlockGate}: one that reads and writes back an edge block runs alone with respect to any
 * other write or fallocate covering that block. The gate is the file's, shared by every DIRECT policy open on it
 * ({@link DirectFileLocks}).
 *
 * <p>A write that ends inside a block reaching past the end of the file (the last block of a file whose size is no
 * multiple of the block) cannot go by O_DIRECT: that writes whole blocks, and would grow the file past the write's end.
 * Its bytes in that block go through a second descriptor of the file without O_DIRECT, and are then written back and
 * dropped from the page cache: the file grows to the write's end and no further, and never shows another size.
 */
final class DirectPolicy implements CachePolicy {
    private final RawFile file;
    private final CacheMode mode;
    private final int block;
    private final int memoryAlignment;
    /** The page size: what the page cache holds, writes back and drops. */
    private final int page = Mincore.pageSize();
    /** The largest request end whose block-aligned span still fits in a long. */
    private final long maxEnd;
    /** Shared with every other DIRECT policy open on the same file: {@link DirectFileLocks}. */
    private final DirectFileLocks locks;
    private final BlockGate gate;
    private final StampedLock sizeLock;
    private final DirectWriteResidue residue;
    /**
     * A range that held no hole at the last SEEK_HOLE, {start, end}: writes inside it skip the lseek (about a
     * microsecond of each 4 KiB write over allocated data). Forgotten at every fallocate and resize; a hole
     * punched by another program is not seen, and only sends writes there the slower way (pwritev into a hole).
     */
    private volatile long[] allocated;
    /** The file without O_DIRECT, for the bytes of a last partial block; opened at first need (guarded by itself). */
    private final Object bufferedLock = new Object();
    private RawFile buffered;
    private boolean closed;

    DirectPolicy(RawFile file, CacheMode mode) throws IOException {
        this.file = file;
        this.mode = mode;
        Alignment alignment = file.alignment();
        this.block = Math.max(alignment.offset(), 512);
        this.memoryAlignment = Math.max(alignment.memory(), 1);
        this.maxEnd = Long.MAX_VALUE - (block - 1);
        if (Integer.bitCount(block) != 1 || block > BufferPool.ALIGNMENT || memoryAlignment > BufferPool.ALIGNMENT) {
            throw new IOException("O_DIRECT on " + file.path() + " needs alignment " + alignment.offset()
                    + " (memory " + alignment.memory() + "), which pagewise cannot bounce (at most "
                    + BufferPool.ALIGNMENT + ", a power of two)");
        }
        this.residue = new DirectWriteResidue(file);
        this.locks = DirectFileLocks.acquire(file, block);
        this.gate = locks.gate;
        this.sizeLock = locks.sizeLock;
    }

    @Override public CacheMode mode() { return mode; }

    @Override public RawFile file() { return file; }

    @Override public int requestAlignment() { return block; }

    /** O_DIRECT takes a vector as is only when the offset and every buffer's address and length are aligned. */
    boolean aligned(IoVector request) {
        if (request.offset() % block != 0 || !request.isDirect()) return false;
        ByteBuffer one = request.single();
        if (one != null) return aligned(one);
        for (ByteBuffer buffer : request.buffers()) {
            if (!aligned(buffer)) return false;
        }
        return true;
    }

    private boolean aligned(ByteBuffer buffer) {
        return buffer.remaining() % block == 0 && buffer.alignmentOffset(buffer.position(), memoryAlignment) == 0;
    }

    @Override
    public long read(IoVector request) throws IOException {
        long offset = request.offset();
        long length = request.length();
        if (offset + length > maxEnd) {
            // Its aligned span would overflow; no file is that large, so this is past the end of file.
            if (offset >= file.size()) return 0;
            throw Errno.exception(-Errno.EOVERFLOW, "preadv", file.path(), offset, length);
        }
        if (aligned(request)) return file.read(request, RawFile.SHORT_IS_EOF);
        ByteBuffer[] dsts = request.buffers();
        // Any unaligned buffer sends the whole request through the bounce buffer, an aligned span at a time.
        boolean small = alignUp(offset + length) - alignDown(offset) <= BufferPool.SMALL_SIZE;
        ByteBuffer bounce = takeBounce(small);
        try {
            long total = 0;
            for (long left = length; left > 0; ) {
                long at = offset + total;
                long start = alignDown(at);
                int want = (int) Math.min(alignUp(at + left) - start, bounce.capacity());
                int n = (int) file.read(IoVector.of(bounce.clear().limit(want), start), RawFile.SHORT_IS_EOF);
                int skip = (int) (at - start);
                int usable = (int) Math.min(n - skip, Math.min(left, want - skip));
                if (usable <= 0) break;
                Buffers.scatter(bounce.clear().position(skip).limit(skip + usable), dsts);
                total += usable;
                left -= usable;
                if (n < want) break;
            }
            return total;
        } finally {
            giveBounce(small, bounce);
        }
    }

    /**
     * Aligned requests only, which go to the kernel as they are. A write holds what {@link #write} holds while it is
     * in flight (the size lock's read side and its pass through the gate), and notes the range written at the end.
     */
    @Override
    public RingRoute ringRoute(IoVector request, boolean write, boolean fua) {
        int descriptor = file.descriptor();
        long offset = request.offset();
        long end = offset + request.length();
        if (descriptor < 0 || end > maxEnd || end < 0 || !aligned(request)) return null;
        if (!write) return new RingRoute(descriptor, 0, true, null);
        long shared = sizeLock.readLock();
        BlockGate.Pass pass = gate.enter(offset, end, -1, -1);
        return new RingRoute(descriptor, fua ? RawFile.DSYNC : 0, false, () -> {
            try {
                gate.leave(pass);
                residue.written(offset, end);
            } catch (IOException dropFailed) {
                // the write itself is done; what it may have left cached stays, as after a failed fadvise anywhere
            } finally {
                sizeLock.unlockRead(shared);
            }
        });
    }

    @Override
    public void write(IoVector request, boolean fua) throws IOException {
        long offset = request.offset();
        long length = request.length();
        if (length == 0) return; // nothing to write
        long end = offset + length;
        if (end > maxEnd || end < 0) throw Errno.exception(-Errno.EFBIG, "pwritev", file.path(), offset, length);
        // AIO: into a hole (a sparse file), ext4 serialises synchronous O_DIRECT writes on the inode lock.
        int flags = (fua ? RawFile.DSYNC : 0) | (overwrites(offset, end) ? 0 : RawFile.AIO);
        long shared = sizeLock.readLock();
        try {
            // The size is read afresh (another program may have cut the file); resizes wait until the write is done.
            if (end % block == 0 || alignUp(end) <= file.size()) {
                writeLocked(request, end, flags);
                return;
            }
            // The last block reaches past the end of the file: what goes there is written buffered.
            long tail = Math.max(offset, alignDown(end));
            if (tail > offset) writeLocked(request, tail, flags);
            writeTail(request.buffers(), tail, end, fua || mode.syncsEveryWrite());
        } finally {
            sizeLock.unlockRead(shared);
        }
    }

    /**
     * Writes [from, end), inside the block that reaches past the end of the file, through the buffered descriptor,
     * then writes its page back (durably when durable) and drops it from the page cache. The kernel caches, writes
     * back and drops whole pages, blocks of other writes in that page included (a page holds up to 8 blocks of 512
     * bytes), so no other write may touch the page meanwhile: the gate keeps them out from its start to the end of
     * the file. An O_DIRECT read sees the page while it is still cached: the kernel writes dirty pages back first.
     */
    private void writeTail(ByteBuffer[] srcs, long from, long end, boolean durable) throws IOException {
        long pageStart = from - from % page;
        RawFile twin = buffered();
        int length = (int) (end - from);
        ByteBuffer bounce = BufferPool.policySmall(); // less than a block
        BlockGate.Pass pass = gate.enterAlone(pageStart, Long.MAX_VALUE);
        try {
            Buffers.gather(srcs, bounce.clear(), 0, length);
            twin.write(IoVector.of(bounce.clear().limit(length), from), durable ? RawFile.DSYNC : 0);
            // Length 0: to the end of the file, so that the last page counts whole.
            if (!durable) {
                twin.syncRange(pageStart, 0, Advice.SYNC_WAIT_BEFORE | Advice.SYNC_WRITE | Advice.SYNC_WAIT_AFTER);
            }
            twin.advise(pageStart, 0, Advice.DONTNEED);
        } finally {
            gate.leave(pass);
        }
    }

    /** The buffered descriptor, opened with the same access as the file's own (a read-only file's writes must fail). */
    private RawFile buffered() throws IOException {
        synchronized (bufferedLock) {
            if (buffered != null) return buffered;
            if (closed) throw new java.nio.channels.ClosedChannelException();
            if (!(file instanceof NativeRawFile)) {
                throw new IOException("O_DIRECT writes into the last, partial block of " + file.path()
                        + " need a second descriptor, which only the native library opens");
            }
            NativeRawFile main = (NativeRawFile) file;
            buffered = main.reopen(main.kernelOpenFlags() & FileDescriptors.READ_WRITE);
            return buffered;
        }
    }

    /**
     * Whether [offset, end) lies in allocated data (no hole up to end, by SEEK_HOLE): then the write goes by pwritev,
     * not io_submit. ext4 runs such an O_DIRECT overwrite under the shared inode lock, so synchronous writes from
     * many threads run at once anyway, and a submitted write costs more: its completion is handed to a kernel worker
     * before the waiting thread wakes. Measured on ext4 (Linux 6.18), 4 KiB O_DIRECT overwrites from one
     * thread ran at 0.5x the rate of pwritev (10,300 against 19,700 a second). Writes into holes, unwritten
     * (fallocated) extents and past the end of the file still go by io_submit. One lseek, about a microsecond, for
     * a write outside the range the last one found allocated ({@link #allocated}); a race with a concurrent hole
     * punch only picks the slower way, never a wrong result.
     */
    private boolean overwrites(long offset, long end) {
        if (!file.isNative()) return false; // AIO is a hint the pure-Java path ignores
        long[] known = allocated;
        if (known != null && offset >= known[0] && end <= known[1]) return true;
        try {
            long hole = file.seek(offset, Space.SEEK_HOLE);
            if (hole > offset) {
                // [offset, hole) has no hole; joined with a known range that ends at the same hole, neither has.
                long start = known != null && known[1] == hole ? Math.min(offset, known[0]) : offset;
                allocated = new long[] {start, hole};
            }
            return hole >= end;
        } catch (IOException e) {
            return false; // as before: by io_submit
        }
    }

    /** Writes the request's bytes up to end (all of them when its buffers are aligned). */
    private void writeLocked(IoVector request, long end, int flags) throws IOException {
        long offset = request.offset();
        if (aligned(request)) {
            BlockGate.Pass pass = gate.enter(offset, end, -1, -1);
            try {
                file.write(request, flags);
            } finally {
                gate.leave(pass);
            }
            residue.written(offset, end);
            return;
        }
        boolean small = alignUp(end) - alignDown(offset) <= BufferPool.SMALL_SIZE;
        ByteBuffer bounce = takeBounce(small);
        ByteBuffer[] srcs = request.buffers();
        try {
            long at = offset;
            while (at < end) {
                long start = alignDown(at);
                long stop = start + Math.min(alignUp(end) - start, bounce.capacity()); // no overflow near 2^63
                int length = (int) (Math.min(end, stop) - at);
                writeChunk(bounce, srcs, at, length, start, stop, flags);
                at += length;
            }
            residue.written(offset, end);
        } finally {
            giveBounce(small, bounce);
        }
    }

    /** Writes the next length bytes of srcs at 'at' as the aligned span [start, stop), filling partial edge blocks from disk. */
    private void writeChunk(ByteBuffer bounce, ByteBuffer[] srcs, long at, int length, long start, long stop, int flags)
            throws IOException {
        boolean partialHead = at > start;
        boolean partialTail = at + length < stop;
        int span = (int) (stop - start);
        BlockGate.Pass pass = gate.enter(start, stop, partialHead ? start : -1, partialTail ? stop - block : -1);
        try {
            if (partialHead) fillBlock(bounce, start, 0);
            if (partialTail && !(partialHead && span == block)) fillBlock(bounce, stop - block, span - block);
            // fillBlock leaves the limit at the end of the block it filled: reset it before copying the middle in.
            Buffers.gather(srcs, bounce.clear(), (int) (at - start), length);
            file.write(IoVector.of(bounce.clear().limit(span), start), flags);
        } finally {
            gate.leave(pass);
        }
    }

    /**
     * A read-modify-write of a block that [offset, offset + length) covers could write that block's old bytes back
     * over the new zeros, so the range passes the gate as a write's span does. The shared size lock keeps an
     * extending write from cutting back a file that ZERO_RANGE has just grown.
     */
    @Override
    public boolean fallocate(int fallocateMode, long offset, long length) throws IOException {
        long end = offset + length;
        long shared = sizeLock.readLock();
        try {
            BlockGate.Pass pass = gate.enter(offset, end, -1, -1);
            try {
                allocated = null; // a punched or zeroed range may be a hole now
                return file.fallocate(fallocateMode, offset, length);
            } finally {
                allocated = null; // and not one that a write read meanwhile
                gate.leave(pass);
            }
        } finally {
            sizeLock.unlockRead(shared);
        }
    }

    /**
     * A bounce buffer: the thread's own for a span of at most {@link BufferPool#SMALL_SIZE} (the shared pool's lock
     * was met by every 4 KiB heap-buffer write from 4 threads), else one of the shared pool.
     */
    private static ByteBuffer takeBounce(boolean small) {
        return small ? BufferPool.policySmall() : BufferPool.shared().take();
    }

    private static void giveBounce(boolean small, ByteBuffer bounce) {
        if (!small) BufferPool.shared().give(bounce);
    }

    /** Reads the block at offset into bounce[index, index + block), zero-filling past end of file. */
    private void fillBlock(ByteBuffer bounce, long offset, int index) throws IOException {
        int n = (int) file.read(IoVector.of(bounce.clear().position(index).limit(index + block), offset),
                RawFile.SHORT_IS_EOF);
        for (int i = index + n; i < index + block; i++) bounce.put(i, (byte) 0);
    }

    private long alignDown(long offset) {
        return offset - offset % block;
    }

    private long alignUp(long offset) {
        return alignDown(offset + block - 1);
    }

    /** Closes the buffered descriptor, if one was opened, and lets go of the file's shared locks. */
    @Override
    public void close() throws IOException {
        synchronized (bufferedLock) {
            if (closed) return;
            closed = true;
            locks.release();
            if (buffered != null) buffered.close();
            buffered = null;
        }
    }

    @Override
    public void resize(long size) throws IOException {
        long exclusive = sizeLock.writeLock();
        try {
            allocated = null;
            file.truncate(size);
        } finally {
            sizeLock.unlockWrite(exclusive);
        }
    }
}

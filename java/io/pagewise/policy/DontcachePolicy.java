package io.pagewise.policy;

import io.pagewise.CacheMode;
import io.pagewise.internal.Buffers;
import io.pagewise.internal.Errno;
import io.pagewise.internal.IoVector;
import io.pagewise.internal.RawFile;
import io.pagewise.system.NativeIOException;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * Uncached buffered I/O with RWF_DONTCACHE (Linux 6.14+): the kernel drops the folios an I/O brought in once it
 * completes. Concurrent readers still leave about 1.5 % behind (readahead shared between requests), so the windows
 * are also tracked by an {@link EvictPolicy} that drops what remains behind the access.
 *
 * <p>Reads use RWF_DONTCACHE only when they cover whole 2 MiB windows. The kernel drops a folio as soon as one
 * uncached read has copied from it, even when the read used only part of a large folio, so the next request reads
 * the rest from disk again: reading a cold 1 GiB file sequentially read 1.58x its size from disk with 64 KiB
 * requests, 1.34x with 256 KiB (nbdcopy's size), 1.10x with 1 MiB and 1.00x with 2 MiB. Smaller reads are plain
 * reads, and the window tracker drops them behind the reader as in EVICT.
 *
 * <p>Writes follow the same rule ({@link #EVERY_WRITE}): an uncached write starts the writeback of its own range
 * when it returns, so many small writes make many small writebacks. Writes of whole windows are uncached writes;
 * smaller ones are buffered, and the window tracker starts the writeback of each window the writer has left and
 * drops it once written, as in EVICT. Either way nothing written stays cached.
 *
 * <p>A file or kernel that answers EOPNOTSUPP switches this policy to plain EVICT for good.
 */
final class DontcachePolicy implements CachePolicy {
    /**
     * Which reads use RWF_DONTCACHE: those covering whole 2 MiB windows ("windows", the default), or every read
     * ("all"). A switch for measuring the two; jmh/dontcache-nbd-reads.sh compares them over NBD.
     */
    static final boolean EVERY_READ = "all".equals(System.getProperty("pagewise.dontcache.reads", "windows"));
    /**
     * Which writes use RWF_DONTCACHE: those covering whole 2 MiB windows ("windows", the default), or every write
     * ("all"). The kernel starts writeback of each uncached write's range as it returns, so writes of nbdcopy's
     * 256 KiB each start a small writeback of their own; smaller writes are buffered and the window tracker writes
     * back and drops whole windows behind the writer, as in EVICT. jmh/compare-servers.sh compares the two
     * (pagewise-dontcache against a jar of the other, @JAR).
     */
    static final boolean EVERY_WRITE = "all".equals(System.getProperty("pagewise.dontcache.writes", "windows"));
    private final RawFile file;
    private final EvictPolicy windows;
    private volatile boolean fellBack;

    DontcachePolicy(RawFile file) throws IOException {
        this.file = file;
        this.windows = new EvictPolicy(file);
        probe();
    }

    /** One byte read with RWF_DONTCACHE tells whether this file supports it; an empty file is probed on first I/O. */
    private void probe() throws IOException {
        if (file.size() == 0) return;
        ByteBuffer one = ByteBuffer.allocateDirect(1);
        try {
            file.read(IoVector.of(one, 0), RawFile.DONTCACHE);
        } catch (NativeIOException e) {
            if (!fallBackOn(e)) throw e;
        }
        // The kernel drops the folio read, not the readahead around it: the window tracker drops that.
        windows.touched(0, 1, false);
    }

    private boolean fallBackOn(NativeIOException e) {
        if (e.errno() != Errno.EOPNOTSUPP) return false;
        fellBack = true;
        return true;
    }

    @Override
    public CacheMode mode() {
        return fellBack ? CacheMode.EVICT : CacheMode.DONTCACHE;
    }

    @Override public RawFile file() { return file; }

    @Override
    public long read(IoVector request) throws IOException {
        long offset = request.offset();
        if (fellBack || !(EVERY_READ || wholeWindows(offset, request.length()))) return windows.read(request);
        ByteBuffer[] dsts = request.buffers();
        int[] start = Buffers.positions(dsts);
        long n;
        try {
            n = file.read(request, RawFile.DONTCACHE);
        } catch (NativeIOException e) {
            if (!fallBackOn(e)) throw e;
            Buffers.restore(dsts, start);
            return windows.read(request);
        }
        windows.touched(offset, n, false);
        return n;
    }

    private static boolean wholeWindows(long offset, long length) {
        return length > 0 && offset % EvictPolicy.WINDOW == 0 && length % EvictPolicy.WINDOW == 0;
    }

    @Override
    public void write(IoVector request, boolean fua) throws IOException {
        long offset = request.offset();
        long length = request.length();
        if (fellBack || !(EVERY_WRITE || wholeWindows(offset, length))) {
            windows.write(request, fua);
            return;
        }
        ByteBuffer[] srcs = request.buffers();
        int[] start = Buffers.positions(srcs);
        try {
            file.write(request, RawFile.DONTCACHE | (fua ? RawFile.DSYNC : 0));
        } catch (NativeIOException e) {
            if (!fallBackOn(e)) throw e;
            Buffers.restore(srcs, start);
            windows.write(request, fua);
            return;
        }
        // The kernel already started writeback and drops these folios when it completes.
        windows.touched(offset, length, false);
    }

    @Override
    public void resize(long size) throws IOException {
        windows.resize(size);
    }

    /** Called only once fallen back to EVICT: DONTCACHE itself does not prefetch ({@link CacheMode#prefetches()}). */
    @Override
    public void prefetch(long offset, long length) throws IOException {
        windows.prefetch(offset, length);
    }

    @Override
    public void close() throws IOException {
        windows.close();
    }
}

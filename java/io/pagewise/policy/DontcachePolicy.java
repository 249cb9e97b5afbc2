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
 * <p>Writes go as in EVICT, at any number of writers ({@link #WRITES}): those of 256 KiB or more in whole pages from
 * aligned direct buffers by O_DIRECT, the others buffered, with the window tracker starting the writeback of each
 * window the writer has left and dropping it once written. Under heavy sequential writes (1, 4 and 16 writers of
 * 2 MiB requests, 4 GiB in all, ext4 on Linux 6.18) RWF_DONTCACHE writes of whole windows made every request's p99
 * latency 2.7-5 times O_DIRECT's (24 against 5 ms with one writer, 160 against 60 ms with 16), and held up to a few
 * hundred MiB in the page cache until their writeback completed, for 1.1-1.3 times the throughput; an uncached
 * write also starts the writeback of its own range when it returns, so small ones make many small writebacks.
 * Either way nothing written stays cached.
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
     * Which writes use RWF_DONTCACHE: none ("evict", the default: every write goes as in EVICT), those covering whole
     * 2 MiB windows ("windows"), or every write ("all"). A switch for measuring them: jmh/dontcache-writes.sh
     * compares them under heavy writes.
     */
    static final String WRITES = System.getProperty("pagewise.dontcache.writes", "evict");
    private static final boolean WINDOW_WRITES = "windows".equals(WRITES);
    private static final boolean EVERY_WRITE = "all".equals(WRITES);
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

    private static boolean uncachedWrite(long offset, long length) {
        return EVERY_WRITE || (WINDOW_WRITES && wholeWindows(offset, length));
    }

    /** A write that goes as in EVICT takes its route on the ring too: a large aligned one by O_DIRECT. */
    @Override
    public RingRoute ringRoute(IoVector request, boolean write, boolean fua) {
        if (!write || (!fellBack && uncachedWrite(request.offset(), request.length()))) return null;
        return windows.ringRoute(request, true, fua);
    }

    @Override
    public void write(IoVector request, boolean fua) throws IOException {
        long offset = request.offset();
        long length = request.length();
        if (fellBack || !uncachedWrite(offset, length)) {
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

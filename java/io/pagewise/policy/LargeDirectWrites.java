package io.pagewise.policy;

import io.pagewise.CacheMode;
import io.pagewise.internal.Buffers;
import io.pagewise.internal.Errno;
import io.pagewise.internal.IoVector;
import io.pagewise.internal.FileDescriptors;
import io.pagewise.internal.Mincore;
import io.pagewise.internal.NativeRawFile;
import io.pagewise.internal.RawFile;
import io.pagewise.system.NativeIOException;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * EVICT's large aligned writes, sent straight to the disk through a second descriptor of the file opened with
 * O_DIRECT. A buffered write copies every byte into the page cache, and then the window tracker starts its
 * writeback, waits for it and drops it; an O_DIRECT write does none of that, and nothing it writes is cached, which
 * is what EVICT promises. Measured over NBD (nbdcopy writing 4 GiB), the server's CPU per GiB went from
 * 1.0x nbdkit {@code cache=none}'s to 0.6x, nearly all of it system time no longer spent in the page cache.
 *
 * <p>A write goes this way only when it is at least {@link #MIN_LENGTH} long, its offset and length are whole pages
 * (so a buffered write to another range never shares a page with it, which O_DIRECT's invalidation of the cache
 * would race with), its buffers are direct with O_DIRECT's alignment, and no page of its range was cached when the
 * file was opened (those pages belong to someone else, and O_DIRECT would drop them). Smaller writes stay buffered:
 * an O_DIRECT write waits for the disk, and from one thread 128 KiB O_DIRECT writes ran at 0.6x the rate of
 * buffered ones here, while 256 KiB ones ran faster.
 *
 * <p>Where the descriptor cannot be opened with O_DIRECT (tmpfs, some FUSE file systems) or the file system refuses
 * a write with EINVAL, every write is buffered from then on.
 */
final class LargeDirectWrites {
    /** Writes shorter than this stay buffered (nbdcopy's requests are 256 KiB). */
    static final int MIN_LENGTH = 256 << 10;
    /** Turns the route off, to measure against it: {@code -Dpagewise.evict.direct-writes=false}. */
    static final boolean ENABLED = Boolean.parseBoolean(System.getProperty("pagewise.evict.direct-writes", "true"));

    private final RawFile file;
    private final PrecachedPages precached;
    private final long unit;
    private final Object lock = new Object();
    /** The O_DIRECT twin, opened at the first write that qualifies; null before and where it cannot be. */
    private volatile DirectPolicy direct;
    private volatile boolean unavailable;

    LargeDirectWrites(RawFile file, PrecachedPages precached) {
        this.file = file;
        this.precached = precached;
        this.unavailable = !ENABLED || !(file instanceof NativeRawFile) || !file.usesPageCache();
        this.unit = unavailable ? 0 : Math.max(Mincore.pageSize(), file.alignment().offset());
    }

    /**
     * Writes srcs at offset by O_DIRECT if the write qualifies; false, with nothing written and the buffers as they
     * were, when the caller must write it buffered.
     */
    boolean write(IoVector request, boolean fua) throws IOException {
        long offset = request.offset();
        long length = request.length();
        if (unavailable || length < MIN_LENGTH || offset % unit != 0 || length % unit != 0) return false;
        DirectPolicy twin = twin();
        if (twin == null || !twin.aligned(request) || !precached.within(offset, offset + length).isEmpty()) {
            return false;
        }
        ByteBuffer[] srcs = request.buffers();
        int[] start = Buffers.positions(srcs);
        try {
            twin.write(request, fua);
            return true;
        } catch (NativeIOException e) {
            if (e.errno() != Errno.EINVAL) throw e;
            unavailable = true; // the file system takes no O_DIRECT writes after all
            Buffers.restore(srcs, start);
            return false;
        }
    }

    /**
     * The ring's route for a write that qualifies as {@link #write} says, through the O_DIRECT descriptor; null
     * where it must be written buffered. (A file system that refuses O_DIRECT writes only when they come fails such
     * a request with EINVAL on the ring, where the blocking write falls back to buffered.)
     */
    RingRoute ringRoute(IoVector request, boolean fua) {
        long offset = request.offset();
        long length = request.length();
        if (unavailable || length < MIN_LENGTH || offset % unit != 0 || length % unit != 0) return null;
        DirectPolicy twin = twin();
        if (twin == null || !precached.within(offset, offset + length).isEmpty()) return null;
        return twin.ringRoute(request, true, fua);
    }

    private DirectPolicy twin() {
        DirectPolicy twin = direct;
        if (twin != null || unavailable) return twin;
        synchronized (lock) {
            if (direct != null || unavailable) return direct;
            NativeRawFile opened = null;
            try {
                NativeRawFile main = (NativeRawFile) file;
                // Only a descriptor opened for writing gets a writable twin: a read-only file's writes must fail.
                if ((main.kernelOpenFlags() & FileDescriptors.READ_WRITE) == 0) {
                    unavailable = true;
                    return null;
                }
                opened = main.reopen(FileDescriptors.READ_WRITE | FileDescriptors.DIRECT);
                direct = new DirectPolicy(opened, CacheMode.DIRECT);
            } catch (IOException e) {
                unavailable = true; // no O_DIRECT here: buffered, as before
                closeQuietly(opened);
            }
            return direct;
        }
    }

    /** Closes the O_DIRECT descriptor, if one was opened. */
    void close() throws IOException {
        synchronized (lock) {
            unavailable = true;
            if (direct != null) {
                try {
                    direct.close(); // its buffered descriptor, if it opened one
                } finally {
                    direct.file().close();
                }
            }
            direct = null;
        }
    }

    private static void closeQuietly(RawFile file) {
        if (file == null) return;
        try {
            file.close();
        } catch (IOException ignored) {
            // it was never used
        }
    }
}

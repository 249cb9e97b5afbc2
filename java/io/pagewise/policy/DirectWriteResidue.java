package io.pagewise.policy;

import io.pagewise.internal.Advice;
import io.pagewise.internal.Mincore;
import io.pagewise.internal.NativeRawFile;
import io.pagewise.internal.RawFile;
import java.io.IOException;

/**
 * Drops what a file system left in the page cache of an O_DIRECT write. btrfs writes a file with data checksums (the
 * default) through the page cache even under O_DIRECT (kernel commit 968f19c5b1b7: the caller could change a buffer
 * while a direct write is in flight, and the checksum would no longer match), then writes the range back and
 * invalidates it. With several threads writing with O_DSYNC or RWF_DSYNC, that invalidation passes over some folios:
 * DIRECTSYNC left 4-6 % of the written data cached. They are clean, and fadvise(DONTNEED) of the range right after
 * the write drops them (it also drains the per-CPU LRU batches and tries again).
 *
 * <p>The drop runs after every write except where the write is known to bypass the cache
 * ({@link NativeRawFile#directWritesBypassCache()}: ext4 and XFS files with direct I/O, block devices). There it
 * dropped nothing and cost one system call per write: 4 KiB DIRECT writes on ext4 took 3.3 µs more than
 * FileChannel's O_DIRECT ones (0.92x their rate), this call and SEEK_HOLE's lseek.
 */
final class DirectWriteResidue {
    private final RawFile file;
    private final long page;
    /** False where an O_DIRECT write leaves nothing to drop: character devices, and see above. */
    private final boolean cached;

    DirectWriteResidue(RawFile file) {
        this.file = file;
        this.page = file.isNative() ? Mincore.pageSize() : 4096;
        this.cached = file.usesPageCache()
                && !(file instanceof NativeRawFile && ((NativeRawFile) file).directWritesBypassCache());
    }

    /** After a write of [offset, end): drops the pages it touched, partial ones included, as O_DIRECT would have. */
    void written(long offset, long end) throws IOException {
        if (!cached) return;
        long start = offset - offset % page;
        long stop = end % page == 0 ? end : end - end % page + page;
        if (stop < 0) file.advise(start, 0, Advice.DONTNEED); // past Long.MAX_VALUE: 0 means to the end of file
        else if (stop > start) file.advise(start, stop - start, Advice.DONTNEED);
    }
}

package io.pagewise.policy;

import io.pagewise.internal.Advice;
import io.pagewise.internal.Mincore;
import io.pagewise.internal.RawFile;
import java.io.IOException;

/**
 * Drops what a file system left in the page cache of an O_DIRECT write. btrfs writes a file with data checksums (the
 * default) through the page cache even under O_DIRECT (kernel commit 968f19c5b1b7, since Linux 6.18 and in stable
 * kernels), and its own invalidation after that buffered write passes over folios that are still held elsewhere:
 * 4-6 % of what DIRECTSYNC wrote stayed cached. fadvise(DONTNEED) of the written pages right after the write drains
 * the per-CPU LRU batches and retries, which drops them.
 *
 * <p>The drop runs after every write on every file system: where the write really bypassed the cache (ext4, XFS) the
 * range holds no pages, and the kernel invalidated any it held before the write, so DONTNEED finds nothing to drop
 * and costs one system call.
 */
final class DirectWriteResidue {
    private final RawFile file;
    private final long page;

    DirectWriteResidue(RawFile file) {
        this.file = file;
        this.page = file.isNative() ? Mincore.pageSize() : 4096;
    }

    /** After a write of [offset, end): drops the pages it touched, partial ones included, as O_DIRECT would have. */
    void written(long offset, long end) throws IOException {
        long start = offset - offset % page;
        long stop = end % page == 0 ? end : end - end % page + page;
        if (stop < 0) file.advise(start, 0, Advice.DONTNEED); // past Long.MAX_VALUE: 0 means to the end of file
        else if (stop > start) file.advise(start, stop - start, Advice.DONTNEED);
    }
}

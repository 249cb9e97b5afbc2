package io.pagewise.policy;

import io.pagewise.internal.Mincore;
import io.pagewise.internal.RawFile;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The byte ranges of a file that were in the page cache when it was opened: someone else's cache,
 * which eviction must leave alone. Stored as sorted, disjoint [start, end) runs.
 *
 * <p>The snapshot costs what the cache holds, not the file's size. cachestat counts a range's cached pages in one
 * call: a range with none is skipped, a range that is all cached is one run, and a mixed range is split and asked
 * again, down to {@link #SPLIT_ABOVE}, where mincore tells which pages. Holes are not skipped by themselves: reading
 * a hole caches zero pages, which someone else may be using. Where cachestat cannot be asked (Linux before 6.5)
 * mincore reads the whole file, which costs seconds per TiB of a sparse file's size.
 */
final class PrecachedPages {
    /** The largest range one mincore bitmap covers (32 KiB of bitmap for 4 KiB pages). */
    private static final long BITMAP_CHUNK = 1L << 30;
    /** The smallest mixed range that is split further with cachestat rather than read with mincore. */
    private static final long SPLIT_ABOVE = 64L << 20;
    /** How many parts a mixed range is split into. */
    private static final int SPLIT = 16;
    private static final PrecachedPages NONE = new PrecachedPages(new long[0]);

    /** start0, end0, start1, end1, ... */
    private final long[] runs;

    private PrecachedPages(long[] runs) {
        this.runs = runs;
    }

    /** Nothing cached by others. */
    static PrecachedPages none() {
        return NONE;
    }

    static PrecachedPages snapshot(RawFile file) throws IOException {
        if (!file.isNative()) return NONE; // residency needs the native library
        long size = file.size();
        if (size == 0) return NONE;
        Scan scan = new Scan(file, Mincore.pageSize());
        if (!scan.range(0, size, file.cachedPages(0, size))) return NONE; // cannot tell: nothing is someone else's
        return scan.runs.isEmpty() ? NONE : new PrecachedPages(scan.runs.toArray());
    }

    /** One snapshot in progress. */
    private static final class Scan {
        final RawFile file;
        final int page;
        final Runs runs = new Runs();

        Scan(RawFile file, int page) {
            this.file = file;
            this.page = page;
        }

        /**
         * Adds the cached runs of [start, end), start page aligned, of which cached pages are cached (-1: unknown);
         * false when residency cannot be read at all.
         */
        boolean range(long start, long end, long cached) throws IOException {
            if (cached == 0) return true;
            if (cached == (end - start + page - 1) / page) {
                runs.add(start, end);
                return true;
            }
            if (cached < 0 || end - start <= SPLIT_ABOVE) return bitmap(start, end);
            long part = (end - start) / SPLIT;
            part = Math.max(SPLIT_ABOVE, part - part % SPLIT_ABOVE); // whole chunks: stays page aligned
            for (long at = start; at < end; at += part) {
                long stop = Math.min(end, at + part);
                if (!range(at, stop, file.cachedPages(at, stop - at))) return false;
            }
            return true;
        }

        /** Adds the resident pages of [start, end) as mincore sees them, a bounded chunk at a time. */
        private boolean bitmap(long start, long end) throws IOException {
            for (long chunk = start; chunk < end; chunk += BITMAP_CHUNK) {
                long length = Math.min(BITMAP_CHUNK, end - chunk);
                byte[] bits = file.residentBitmap(chunk, length);
                if (bits == null) return false;
                long pages = (length + page - 1) / page;
                for (long i = 0; i < pages; i++) {
                    if ((bits[(int) (i >>> 3)] & (1 << (i & 7))) != 0) {
                        runs.add(chunk + i * page, Math.min(end, chunk + (i + 1) * page));
                    }
                }
            }
            return true;
        }
    }

    /** Sorted [start, end) runs, added in order; a run that starts where the last one ends extends it. */
    private static final class Runs {
        private long[] bounds = new long[16];
        private int size;

        void add(long start, long end) {
            if (size > 0 && bounds[size - 1] == start) {
                bounds[size - 1] = end;
                return;
            }
            if (size == bounds.length) bounds = Arrays.copyOf(bounds, size * 2);
            bounds[size++] = start;
            bounds[size++] = end;
        }

        boolean isEmpty() {
            return size == 0;
        }

        long[] toArray() {
            return Arrays.copyOf(bounds, size);
        }
    }

    /** These runs cut to [0, size): a file cut to size has no pages past it, whoever cached them. */
    PrecachedPages below(long size) {
        int kept = 0;
        while (kept < runs.length / 2 && runs[2 * kept] < size) kept++;
        if (kept == runs.length / 2 && (kept == 0 || runs[2 * kept - 1] <= size)) return this;
        if (kept == 0) return NONE;
        long[] cut = Arrays.copyOf(runs, 2 * kept);
        cut[2 * kept - 1] = Math.min(cut[2 * kept - 1], size);
        return new PrecachedPages(cut);
    }

    /** Whether [start, end) was wholly cached at open, so that none of its pages is ours to write back or drop. */
    boolean covers(long start, long end) {
        int run = firstEndingAfter(start);
        return run < runs.length / 2 && runs[2 * run] <= start && runs[2 * run + 1] >= end;
    }

    /** The index of the first run whose end is after start (the number of runs if none). */
    private int firstEndingAfter(long start) {
        int lo = 0;
        int hi = runs.length / 2;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (runs[2 * mid + 1] <= start) lo = mid + 1; else hi = mid;
        }
        return lo;
    }

    /** The runs that overlap [start, end), in order, as {start, end} pairs. */
    List<long[]> within(long start, long end) {
        if (runs.length == 0) return List.of();
        List<long[]> result = new ArrayList<>();
        for (int i = firstEndingAfter(start); i < runs.length / 2 && runs[2 * i] < end; i++) {
            result.add(new long[] {runs[2 * i], runs[2 * i + 1]});
        }
        return result;
    }
}

package io.pagewise.policy;

import io.pagewise.internal.RawFile;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * The byte ranges of a file that were in the page cache when it was opened: someone else's cache,
 * which eviction must leave alone. Stored as sorted, disjoint [start, end) runs.
 */
final class PrecachedPages {
    private static final int PAGE = 4096;
    private static final long SCAN_CHUNK = 1L << 30;
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
        long size = file.size();
        List<Long> found = new ArrayList<>();
        long runStart = -1;
        for (long chunk = 0; chunk < size; chunk += SCAN_CHUNK) {
            long length = Math.min(SCAN_CHUNK, size - chunk);
            byte[] bits = file.residentBitmap(chunk, length);
            if (bits == null) return NONE; // cannot tell: treat nothing as someone else's
            long pages = (length + PAGE - 1) / PAGE;
            for (long i = 0; i < pages; i++) {
                boolean resident = (bits[(int) (i >>> 3)] & (1 << (i & 7))) != 0;
                long at = chunk + i * PAGE;
                if (resident && runStart < 0) {
                    runStart = at;
                } else if (!resident && runStart >= 0) {
                    found.add(runStart);
                    found.add(at);
                    runStart = -1;
                }
            }
        }
        if (runStart >= 0) {
            found.add(runStart);
            found.add(size);
        }
        if (found.isEmpty()) return NONE;
        long[] runs = new long[found.size()];
        for (int i = 0; i < runs.length; i++) runs[i] = found.get(i);
        return new PrecachedPages(runs);
    }

    /** The runs that overlap [start, end), in order, as {start, end} pairs. */
    List<long[]> within(long start, long end) {
        if (runs.length == 0) return List.of();
        List<long[]> result = new ArrayList<>();
        int lo = 0;
        int hi = runs.length / 2;
        while (lo < hi) { // first run whose end is after start
            int mid = (lo + hi) >>> 1;
            if (runs[2 * mid + 1] <= start) lo = mid + 1; else hi = mid;
        }
        for (int i = lo; i < runs.length / 2 && runs[2 * i] < end; i++) {
            result.add(new long[] {runs[2 * i], runs[2 * i + 1]});
        }
        return result;
    }
}

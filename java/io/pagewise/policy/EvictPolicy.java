package io.pagewise.policy;

import io.pagewise.CacheMode;
import io.pagewise.internal.Advice;
import io.pagewise.internal.IoVector;
import io.pagewise.internal.Mincore;
import io.pagewise.internal.RawFile;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Buffered I/O that evicts what it touched, behind the access, in 2 MiB-aligned windows.
 *
 * <p>Evicting exactly the range just read does not work on current kernels: large folios straddle request
 * boundaries and readahead runs megabytes ahead, so fadvise(DONTNEED) of the request leaves most of it cached.
 * Here every request marks the aligned windows it touched as active; the least recently used active window is
 * retired once more than {@link #ACTIVE_WINDOWS} are active. A retired clean window is dropped together with the
 * readahead it may have spilled into the next windows (stopping at any active one). A retired dirty window first
 * has its writeback started (SYNC_FILE_RANGE_WRITE) and joins a queue; only when that queue is longer than
 * {@link #WRITEBACK_WINDOWS} is its oldest window waited for and dropped, so writers rarely wait. A retired clean
 * window is dropped once more {@link #RECHECK_WINDOWS} retirements later, for folios still in use the first time.
 *
 * <p>Pages that were cached when the file was opened belong to someone else: they are never dropped, and a dirty
 * window made only of them is not written back either (the kernel writes it back as any buffered write).
 *
 * <p>Writes of at least 256 KiB in whole pages skip the cache altogether: {@link LargeDirectWrites}.
 */
final class EvictPolicy implements CachePolicy {
    static final long WINDOW = 2L << 20;
    static final int ACTIVE_WINDOWS = 8;
    static final int WRITEBACK_WINDOWS = 8;
    /**
     * A folio that another request still holds (a concurrent RWF_DONTCACHE read, a readahead completing) survives
     * fadvise(DONTNEED), and nothing touches its window again. Measured with 64 concurrent nbdcopy requests, that
     * left 0.3-1.7 % of a file behind; dropping each clean window a second time 256 MiB of retirements later left 0 %.
     */
    static final int RECHECK_WINDOWS = 128;
    static final int CLOSE_RETRIES = 20;
    static final long CLOSE_RETRY_MILLIS = 5;
    private final RawFile file;
    /**
     * How many windows past a retired clean window readahead may have filled: the device's readahead plus one window
     * for alignment. A reader that stops at a boundary (nbdcopy's work units, the end of a partial read) leaves up to
     * that much behind it that no later access would evict.
     */
    private final int spillWindows;
    /**
     * How far past the windows ever touched the sweep at close looks: twice the readahead, plus one window. Sequential
     * readahead submits its next window, of up to the readahead size, when the reader reaches the start of the current
     * one's last part, so its pages can lie up to twice that ahead of the last read: with 8 MiB of readahead, the
     * consumer app found 2 to 5.5 MiB of its image cached 10 to 16 MiB past the data before a hole (which the server
     * answers without reading), about one run in five with other I/O going on.
     */
    private final int sweepSpillWindows;

    /** Replaced, cut to the new size, by a resize: pages past it are gone, no one's cache any more. */
    private volatile PrecachedPages precached;
    /** Large aligned writes go to the disk by O_DIRECT, bypassing the cache and this tracker. */
    private final LargeDirectWrites directWrites;
    /** False for files without page cache (character devices), where there is nothing to evict. */
    private final boolean tracking;
    private final Object lock = new Object();
    /** Active windows in access order, mapped to whether they were written. */
    private final LinkedHashMap<Long, Boolean> active = new LinkedHashMap<>(32, 0.75f, true);
    private final ArrayDeque<Long> writeback = new ArrayDeque<>();
    /** Clean windows retired lately, to be dropped once more {@link #RECHECK_WINDOWS} retirements later. */
    private final ArrayDeque<Long> recheck = new ArrayDeque<>();
    /**
     * Every window a read, write or prefetch went through, for the sweep at close: pages others cached after open
     * elsewhere in the file are theirs. Windows past {@link Integer#MAX_VALUE} (a file over 4 PiB) set everTouchedFar
     * instead, and the sweep then covers the whole file. Under lock.
     */
    private final java.util.BitSet everTouched = new java.util.BitSet();
    private boolean everTouchedFar;
    /**
     * The latest touch of a window, as window * 2 + dirty, in a slot by window: a request in a window that was touched
     * as dirty (or clean, for a read) and has been active since skips the lock. A slot is kept for each of a few
     * windows at once, so threads working in windows of their own do not take the lock on every request (with one
     * slot for the whole file, 4 threads' 4 KiB reads took it every time: 0.95-0.98x FileChannel's rate).
     */
    private final java.util.concurrent.atomic.AtomicReferenceArray<Touch> recent = new java.util.concurrent.atomic.AtomicReferenceArray<>(RECENT);
    private static final int RECENT = 16;
    /** Counts windows that left the active set: a touch seen before one left may be of a window no longer active. */
    private volatile long generation;

    private record Touch(long key, long generation) {}

    EvictPolicy(RawFile file) throws IOException {
        this.file = file;
        long readaheadWindows = (file.readaheadBytes() + WINDOW - 1) / WINDOW;
        this.spillWindows = (int) Math.min(64, readaheadWindows + 1);
        this.sweepSpillWindows = (int) Math.min(128, 2 * readaheadWindows + 1);
        this.tracking = file.usesPageCache();
        this.precached = tracking ? PrecachedPages.snapshot(file) : PrecachedPages.none();
        this.directWrites = new LargeDirectWrites(file, precached);
    }

    @Override public CacheMode mode() { return CacheMode.EVICT; }

    @Override public RawFile file() { return file; }

    @Override
    public long read(IoVector request) throws IOException {
        long n = file.read(request, 0);
        touched(request.offset(), n, false);
        return n;
    }

    @Override
    public void write(IoVector request, boolean fua) throws IOException {
        if (directWrites.write(request, fua)) return;
        file.write(request, fua ? RawFile.DSYNC : 0);
        touched(request.offset(), request.length(), true);
    }

    /** Large aligned writes, which go past the page cache by O_DIRECT; everything else is tracked here, blocking. */
    @Override
    public RingRoute ringRoute(IoVector request, boolean write, boolean fua) {
        return write ? directWrites.ringRoute(request, fua) : null;
    }

    @Override
    public void prefetch(long offset, long length) throws IOException {
        CachePolicy.willNeed(file, offset, length);
        touched(offset, length, false);
    }

    /** What is written past a new size later is ours, even where someone else's pages were cached at open. */
    @Override
    public void resize(long size) throws IOException {
        file.truncate(size);
        precached = precached.below(size);
    }

    /**
     * A retired window, the range to drop for it, and the clean window retired {@link #RECHECK_WINDOWS} earlier that
     * is due its second drop (-1 for none).
     */
    private record Retired(long window, boolean dirty, long dropEnd, long recheckDue) {}

    /** Records that [offset, offset + length) was read (dirty false) or written; evicts windows now out of use. */
    void touched(long offset, long length, boolean dirty) throws IOException {
        if (length <= 0 || !tracking) return;
        long first = offset / WINDOW;
        long last = (offset + length - 1) / WINDOW;
        long key = first * 2 + (dirty ? 1 : 0);
        if (first == last) {
            Touch seen = recent.get((int) (first & (RECENT - 1)));
            if (seen != null && seen.generation() == generation && (seen.key() == key || (!dirty && seen.key() == key + 1))) {
                return;
            }
        }
        if (othersOnly(first, last, dirty)) return; // after the cheaper check above, before the lock
        List<Retired> retired = null;
        synchronized (lock) {
            if (last < Integer.MAX_VALUE) everTouched.set((int) first, (int) last + 1); else everTouchedFar = true;
            for (long w = first; w <= last; w++) {
                Boolean wasDirty = active.get(w);
                if (wasDirty == null || (dirty && !wasDirty)) active.put(w, dirty || (wasDirty != null && wasDirty));
            }
            if (active.size() > ACTIVE_WINDOWS) {
                retired = new ArrayList<>();
                Iterator<Map.Entry<Long, Boolean>> oldest = active.entrySet().iterator();
                while (active.size() > ACTIVE_WINDOWS) {
                    Map.Entry<Long, Boolean> entry = oldest.next();
                    oldest.remove();
                    long window = entry.getKey();
                    boolean wasDirty = entry.getValue();
                    retired.add(new Retired(window, wasDirty, dropEnd(window, spillWindows),
                            wasDirty ? -1 : queueForRecheck(window)));
                }
                generation++;
            }
            // The newest window stays active whatever was retired above.
            recent.set((int) (last & (RECENT - 1)), new Touch(last * 2 + (active.get(last) ? 1 : 0), generation));
        }
        if (retired != null) retire(retired);
    }

    /**
     * Whether tracking windows first to last would come to nothing: every page their retirement would drop or write
     * back (a clean window's with the readahead spill after it, a dirty one's itself) was cached before the file was
     * opened, and is never dropped or written back by us. Requests at random over a file cached whole took the
     * tracker's lock nearly every time, since each meets a window not touched lately.
     */
    private boolean othersOnly(long first, long last, boolean dirty) {
        long end = last + 1 + (dirty ? 0 : spillWindows);
        return end < Long.MAX_VALUE / WINDOW && precached.covers(first * WINDOW, end * WINDOW);
    }

    /** Queues a retired clean window for its second drop; returns the window now due one (-1 for none). Under lock. */
    private long queueForRecheck(long window) {
        recheck.addLast(window);
        if (recheck.size() <= RECHECK_WINDOWS) return -1;
        long due = recheck.pollFirst();
        return active.containsKey(due) ? -1 : due;
    }

    /** The end of the range to drop for a window: its own end plus up to spill following windows not in use. */
    private long dropEnd(long window, int spill) {
        long end = window + 1;
        while (end <= window + spill && !active.containsKey(end)) end++;
        return end * WINDOW;
    }

    private void retire(List<Retired> retired) throws IOException {
        List<Long> toWait = null;
        for (Retired r : retired) {
            if (!r.dirty) {
                drop(r.window * WINDOW, r.dropEnd);
                if (r.recheckDue >= 0) drop(r.recheckDue * WINDOW, (r.recheckDue + 1) * WINDOW);
                continue;
            }
            if (precachedWhole(r.window)) continue;
            file.syncRange(r.window * WINDOW, WINDOW, Advice.SYNC_WRITE);
            synchronized (lock) {
                writeback.addLast(r.window);
                while (writeback.size() > WRITEBACK_WINDOWS) {
                    if (toWait == null) toWait = new ArrayList<>();
                    toWait.add(writeback.pollFirst());
                }
            }
        }
        if (toWait != null) {
            for (long window : toWait) {
                file.syncRange(window * WINDOW, WINDOW,
                        Advice.SYNC_WAIT_BEFORE | Advice.SYNC_WRITE | Advice.SYNC_WAIT_AFTER);
                drop(window * WINDOW, (window + 1) * WINDOW);
            }
        }
    }

    /**
     * Whether every page of a window was cached at open: nothing of it will be dropped, so its writeback is left to
     * the kernel, as for any buffered write. Starting it here would only write the same hot pages to the disk again
     * and again (4 KiB writes to a cached file wrote 2.2 GB/s).
     */
    private boolean precachedWhole(long window) {
        return precached.covers(window * WINDOW, (window + 1) * WINDOW);
    }

    /** fadvise(DONTNEED) of [start, end) except the pages that were cached before we opened the file. */
    private void drop(long start, long end) throws IOException {
        long at = start;
        for (long[] keep : precached.within(start, end)) {
            if (keep[0] > at) file.advise(at, keep[0] - at, Advice.DONTNEED);
            at = Math.max(at, keep[1]);
        }
        if (end > at) file.advise(at, end - at, Advice.DONTNEED);
    }

    /** Writes back and drops every window still held, including readahead past the last ones and the rechecks. */
    @Override
    public void close() throws IOException {
        directWrites.close();
        List<Retired> clean = new ArrayList<>();
        List<Long> dirty = new ArrayList<>();
        List<Long> again;
        List<long[]> touchedRanges;
        synchronized (lock) {
            dirty.addAll(writeback);
            writeback.clear();
            again = new ArrayList<>(recheck);
            recheck.clear();
            List<Map.Entry<Long, Boolean>> entries = new ArrayList<>(active.entrySet());
            active.clear();
            for (Map.Entry<Long, Boolean> e : entries) {
                if (e.getValue()) {
                    if (!precachedWhole(e.getKey())) dirty.add(e.getKey());
                }
                else clean.add(new Retired(e.getKey(), false, (e.getKey() + 1 + spillWindows) * WINDOW, -1));
            }
            generation++;
            touchedRanges = touchedRanges();
        }
        List<long[]> dropped = new ArrayList<>();
        for (long window : dirty) file.syncRange(window * WINDOW, WINDOW, Advice.SYNC_WRITE);
        for (long window : dirty) {
            file.syncRange(window * WINDOW, WINDOW,
                    Advice.SYNC_WAIT_BEFORE | Advice.SYNC_WRITE | Advice.SYNC_WAIT_AFTER);
            dropped.add(new long[] {window * WINDOW, (window + 1) * WINDOW});
        }
        for (Retired r : clean) dropped.add(new long[] {r.window * WINDOW, r.dropEnd});
        for (long window : again) dropped.add(new long[] {window * WINDOW, (window + 1) * WINDOW});
        for (long[] range : dropped) drop(range[0], range[1]);
        if (file.isNative()) {
            dropAgainWhileCached(dropped);
            sweep(touchedRanges); // none when nothing went through this policy: a file never used has no pages of ours
        }
    }

    /**
     * The ranges above are the ones still tracked; a window retired earlier whose drops each met a folio that a
     * concurrent reader held stays cached, untracked: the consumer app found 2 MiB of a 128 MiB export cached after
     * serving it, about one run in ten. Where cachestat counts a range in one call, every range this policy went
     * through (with the readahead distance after it) is asked, and pages of ours in it are dropped the same way. Only
     * those ranges: what others cached elsewhere in the file since it was opened is theirs.
     */
    private void sweep(List<long[]> touched) throws IOException {
        if (!tracking || touched.isEmpty()) return;
        long size = file.size();
        if (size <= 0) return;
        List<long[]> found = new ArrayList<>();
        for (long[] range : touched) {
            long end = Math.min(range[1], size);
            if (range[0] >= end) continue;
            long cached = file.cachedPages(range[0], end - range[0]); // -1: no cachestat here
            if (cached < 0) return;
            if (cached > 0 && ours(cached, range[0], end) > 0) found.add(new long[] {range[0], end});
        }
        for (long[] range : found) drop(range[0], range[1]);
        dropAgainWhileCached(found);
    }

    /** The windows ever touched, as byte ranges with the sweep's spill after each; the whole file past 4 PiB. */
    private List<long[]> touchedRanges() {
        List<long[]> ranges = new ArrayList<>();
        if (everTouchedFar) {
            ranges.add(new long[] {0, Long.MAX_VALUE});
            return ranges;
        }
        for (int start = everTouched.nextSetBit(0); start >= 0; ) {
            int end = everTouched.nextClearBit(start);
            long spillEnd = (end + (long) sweepSpillWindows) * WINDOW;
            ranges.add(new long[] {start * WINDOW, Math.min(Long.MAX_VALUE / 2, spillEnd)});
            start = everTouched.nextSetBit(end);
        }
        return ranges;
    }

    /**
     * Readahead still in flight when the last request ended holds its pages locked, and fadvise(DONTNEED) passes over
     * locked pages: an application that closed the file just after reading it found up to 4 MiB of it cached, about
     * one run in ten. The ranges dropped at close are dropped again while pages of ours remain in them, at most
     * {@link #CLOSE_RETRIES} times, {@link #CLOSE_RETRY_MILLIS} apart at first and twice as far each time up to 16
     * times that (1.4 s in all), for a disk busy with other I/O. (The 2 MiB the consumer app found cached in CI were
     * not such pages but readahead past the sweep's reach: see {@link #sweepSpillWindows}.)
     */
    private void dropAgainWhileCached(List<long[]> ranges) throws IOException {
        long size = file.size();
        for (int attempt = 0; attempt < CLOSE_RETRIES; attempt++) {
            List<long[]> left = new ArrayList<>();
            for (long[] range : ranges) {
                long end = Math.min(range[1], size);
                if (end > range[0] && ownCachedPages(range[0], end) > 0) left.add(range);
            }
            if (left.isEmpty()) return;
            try {
                Thread.sleep(CLOSE_RETRY_MILLIS << Math.min(attempt, 4));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            for (long[] range : left) drop(range[0], range[1]);
            ranges = left;
        }
    }

    /** Cached pages of [start, end), start page aligned, that were not cached when the file was opened. */
    private long ownCachedPages(long start, long end) throws IOException {
        return ours(file.residentPages(start, end - start), start, end);
    }

    /** Of cached pages counted in [start, end), those that were not cached when the file was opened. */
    private long ours(long cached, long start, long end) {
        if (cached <= 0) return cached;
        int page = Mincore.pageSize();
        for (long[] keep : precached.within(start, end)) {
            long from = Math.max(start, keep[0]);
            long to = Math.min(end, keep[1]);
            cached -= (to - from + page - 1) / page;
        }
        return cached;
    }
}

package io.pagewise.backends;

import io.pagewise.Extent;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The data and hole runs a {@link FileDevice} has learned of its file, so that a READ of a sparse file plans its
 * holes without asking the file again (an fstat and two or more lseeks each time). Each run is kept whole, as the
 * file reported it, keyed by its start; runs learned together are contiguous. The device forgets the runs near
 * every range it writes, zeroes or trims, and all of them when it resizes the file.
 *
 * <p>A run that was data may have become a hole since and still read correctly (a read of a hole gives zeros); a
 * hole that another program has since written would read as zeros. So a device keeps a map only while it writes
 * the file itself (see {@link FileDevice}), taken to be the file's one writer, as an NBD export is. Within this
 * process the writable devices of one file (the same device and inode) share one map, so that what one of them
 * writes the others forget too: two exports of one file, or a file that {@code --dir} opens again after a resize.
 */
final class ExtentMap {
    /** The shared maps, by file identity, while a device uses them. */
    private static final Map<Object, ExtentMap> SHARED = new HashMap<>();

    /** Runs kept at most; past that the map starts again, so a badly fragmented file costs memory only this much. */
    static final int MAX_RUNS = 4096;
    /**
     * What a write or a space change may change around its range: a file system allocates and punches whole blocks
     * (or clusters, or records), at most this large on the ones Linux commonly uses.
     */
    static final long SLACK = 16L << 20;

    private final TreeMap<Long, Extent> runs = new TreeMap<>();
    /**
     * Counts the changes the device made: runs asked of the file before a change are not kept after it (what the
     * file said may be from before the change, and the change has already forgotten its range).
     */
    private long changes;
    /** The file identity it is shared under, or null for a map of its own. */
    private final Object identity;
    /** Devices that use it; guarded by SHARED. */
    private int users;

    /** A map of its own, shared with nobody. */
    ExtentMap() {
        this(null);
    }

    private ExtentMap(Object identity) {
        this.identity = identity;
    }

    /** {@return the map of the file whose identity ({@code BasicFileAttributes.fileKey()}) is given}; release it after */
    static ExtentMap shared(Object identity) {
        synchronized (SHARED) {
            ExtentMap map = SHARED.computeIfAbsent(identity, ExtentMap::new);
            map.users++;
            return map;
        }
    }

    /** A device no longer uses the map: the last one to go removes it. */
    void release() {
        if (identity == null) return;
        synchronized (SHARED) {
            if (--users == 0) SHARED.remove(identity);
        }
    }

    /**
     * {@return the runs of [offset, offset + length), clipped to it, at most maxExtents, from what is known; null
     * when some of the range before the last run returned is not known}
     */
    synchronized List<Extent> lookup(long offset, long length, int maxExtents) {
        Map.Entry<Long, Extent> first = runs.floorEntry(offset);
        if (first == null || first.getValue().end() <= offset) return null;
        return clip(runs.tailMap(first.getKey(), true).values(), offset, length, maxExtents, false);
    }

    /**
     * {@return the runs of [offset, offset + length) from runs (in order, the first one covering offset), clipped to
     * the range, adjacent ones of a kind merged, at most maxExtents}: as {@code StorageFile.extents} gives them. Where
     * the runs end or have a gap before the range does, what comes before it when endsThere (the file ends there),
     * else null (not known)
     */
    static List<Extent> clip(Iterable<Extent> runs, long offset, long length, int maxExtents, boolean endsThere) {
        long end = offset + length;
        List<Extent> found = new ArrayList<>(4);
        long at = offset;
        for (Extent run : runs) {
            if (run.end() <= at) continue;
            if (run.offset() > at) return endsThere ? found : null;
            long stop = Math.min(run.end(), end);
            int last = found.size() - 1;
            if (last >= 0 && found.get(last).hole() == run.hole()) {
                Extent previous = found.get(last);
                found.set(last, new Extent(previous.offset(), stop - previous.offset(), run.hole()));
            } else {
                if (found.size() == maxExtents) return found;
                found.add(new Extent(at, stop - at, run.hole()));
            }
            at = stop;
            if (at >= end) return found;
        }
        return endsThere ? found : null;
    }

    /** {@return the count of changes so far}, to be given to {@link #learn} with what the file is asked next */
    synchronized long changes() {
        return changes;
    }

    /**
     * Keeps runs the file reported, in order and contiguous, replacing what was known of their span, unless the
     * device changed the file since {@code changesBefore} was read (before the file was asked).
     */
    synchronized void learn(List<Extent> learned, long changesBefore) {
        if (learned.isEmpty() || changesBefore != changes || learned.size() > MAX_RUNS) return;
        if (runs.size() + learned.size() > MAX_RUNS) runs.clear();
        forgetLocked(learned.get(0).offset(), learned.get(learned.size() - 1).end());
        for (Extent run : learned) runs.put(run.offset(), run);
    }

    /**
     * Forgets what is known near [offset, offset + length), which the device has just changed: after the change, so
     * that no run asked of the file before it is kept.
     */
    synchronized void forget(long offset, long length) {
        changes++;
        if (runs.isEmpty()) return;
        long from = Math.max(0, offset - SLACK);
        long to = offset + length > Long.MAX_VALUE - SLACK ? Long.MAX_VALUE : offset + length + SLACK;
        forgetLocked(from, to);
    }

    /** Forgets everything, after the file's size changed (and so its runs at the end). */
    synchronized void clear() {
        changes++;
        runs.clear();
    }

    private void forgetLocked(long from, long to) {
        Map.Entry<Long, Extent> before = runs.lowerEntry(from);
        if (before != null && before.getValue().end() > from) runs.remove(before.getKey());
        runs.subMap(from, true, to, false).clear();
    }
}

package io.pagewise.lucene;

import io.pagewise.AccessHint;
import io.pagewise.CacheMode;
import java.util.Objects;

/**
 * How {@link PagewiseDirectory} reads or writes one kind of file in one I/O context: a {@link CacheMode}, an
 * {@link AccessHint}, and whether a new file follows its neighbours.
 *
 * <ul>
 * <li>Reads in a mode that keeps what it reads (WRITEBACK, WRITETHROUGH, UNSAFE) are memory-mapped, as
 *     MMapDirectory maps them, and Lucene gives the mapping its own advice; the hint is not used. Reads in any other
 *     mode go through a {@link io.pagewise.StorageFile} in that mode, advised with the hint.</li>
 * <li>Writes go through a StorageFile in the mode, advised with the hint.</li>
 * <li>A policy that {@linkplain #followsNeighbours() follows its neighbours} writes a new file in WRITEBACK, kept
 *     in the page cache, when the files already in the directory are at least half cached: those of the same type
 *     (extension), or all of them when there are none of its type, or when the directory holds no other file yet;
 *     a file a merge or read-once input has open counts as cached as it was when the input opened it, since such an
 *     input keeps what it is reading cached until it closes.
 *     Otherwise it writes in its mode. A merge of segments that are being searched makes a segment that will be,
 *     and a merge of segments nobody reads makes one nobody will; see docs/LUCENE.md.</li>
 * </ul>
 *
 * @param mode              the cache mode
 * @param hint              the access hint
 * @param followsNeighbours whether a new file is kept in the page cache when its neighbours are
 */
public record FilePolicy(CacheMode mode, AccessHint hint, boolean followsNeighbours) {
    /** The share of the neighbours' pages that must be cached for a new file to be kept. */
    public static final double KEEP_WHEN_NEIGHBOURS_CACHED = 0.5;

    /**
     * Checks the parts.
     *
     * @param mode              the cache mode
     * @param hint              the access hint
     * @param followsNeighbours whether a new file is kept in the page cache when its neighbours are
     * @throws NullPointerException when mode or hint is null
     * @throws IllegalArgumentException when hint is a range hint (WILLNEED, DONTNEED), which says nothing about a
     *         whole file
     */
    public FilePolicy {
        Objects.requireNonNull(mode, "mode");
        Objects.requireNonNull(hint, "hint");
        if (hint.isRangeHint()) {
            throw new IllegalArgumentException("AccessHint." + hint + " is for a range, not a whole file: use NORMAL,"
                    + " SEQUENTIAL, RANDOM or NOREUSE");
        }
    }

    /**
     * {@return a policy that always uses the mode and hint}
     *
     * @param mode the cache mode
     * @param hint the access hint
     */
    public static FilePolicy of(CacheMode mode, AccessHint hint) {
        return new FilePolicy(mode, hint, false);
    }

    /**
     * {@return a policy whose new files are kept cached when their neighbours are, and otherwise written in mode}
     *
     * @param mode the cache mode for a file whose neighbours are not cached
     * @param hint the access hint
     */
    public static FilePolicy followingNeighbours(CacheMode mode, AccessHint hint) {
        return new FilePolicy(mode, hint, true);
    }

    /** {@return whether reads under this policy are memory-mapped: the mode keeps what it reads} */
    public boolean mapsReads() {
        return !mode.needsNative() && !mode.isDirect();
    }

    @Override
    public String toString() {
        return mode + "/" + hint + (followsNeighbours ? " (kept when its neighbours are cached)" : "");
    }
}

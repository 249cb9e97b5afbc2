package io.pagewise.nbd.server.protocol;

import static io.pagewise.nbd.wire.Protocol.BASE_ALLOCATION;
import static io.pagewise.nbd.wire.Protocol.BASE_ALLOCATION_ID;
import static io.pagewise.nbd.wire.Protocol.STATE_HOLE;
import static io.pagewise.nbd.wire.Protocol.STATE_ZERO;

import io.pagewise.Extent;
import io.pagewise.device.BlockDevice;
import io.pagewise.device.Capability;
import io.pagewise.device.ChangeTracker;
import io.pagewise.device.FilterDevice;
import io.pagewise.device.LayeredDevice;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * A meta context an export offers: {@code base:allocation} (the device's map of holes, when it has one),
 * {@code qemu:dirty-bitmap:NAME} for each {@link ChangeTracker} in its filter stack, and {@code qemu:allocation-depth}
 * when the server offers it. The id is what SET_META_CONTEXT answers and BLOCK_STATUS chunks carry: 1 for
 * base:allocation, 2 and up for the bitmaps in the order found, then allocation depth.
 *
 * @param id      the context id on the wire
 * @param name    the context's full name
 * @param kind    what its descriptors say
 * @param tracker the dirty bitmap it reads, or null for the other kinds
 */
record MetaContext(int id, String name, Kind kind, ChangeTracker tracker) {
    /** What a context's descriptors say. */
    enum Kind { ALLOCATION, DIRTY_BITMAP, ALLOCATION_DEPTH }

    /** The prefix of qemu's dirty bitmap contexts, and the LIST query for all of them. */
    static final String DIRTY_BITMAP = "qemu:dirty-bitmap:";
    /** qemu's context for where in a backing chain each range lives (qemu-nbd -A). */
    static final String ALLOCATION_DEPTH = "qemu:allocation-depth";
    /** NBD_STATE_DIRTY, the one flag of a dirty bitmap context: set for a changed range. */
    static final int STATE_DIRTY = 1;
    /** The most contexts a SET_META_CONTEXT may select: each BLOCK_STATUS answers one chunk for each. */
    static final int MAX_SELECTED = 64;

    static final MetaContext ALLOCATION = new MetaContext(BASE_ALLOCATION_ID, BASE_ALLOCATION, Kind.ALLOCATION, null);

    /** A run of one status: a descriptor of a BLOCK_STATUS chunk. */
    record Run(long offset, long length, int status) {
        long end() {
            return offset + length;
        }
    }

    /**
     * {@return the contexts an export's device offers}, in id order
     *
     * @param device          the export's device, the top of its filter stack
     * @param allocationDepth whether the server offers qemu:allocation-depth
     */
    static List<MetaContext> offeredBy(BlockDevice device, boolean allocationDepth) {
        List<MetaContext> offered = new ArrayList<>();
        if (device.capabilities().has(Capability.EXTENTS)) offered.add(ALLOCATION);
        int id = BASE_ALLOCATION_ID + 1;
        for (ChangeTracker tracker : ChangeTracker.find(device)) {
            offered.add(new MetaContext(id++, DIRTY_BITMAP + tracker.bitmapName(), Kind.DIRTY_BITMAP, tracker));
        }
        if (allocationDepth) offered.add(new MetaContext(id, ALLOCATION_DEPTH, Kind.ALLOCATION_DEPTH, null));
        return offered;
    }

    /**
     * {@return true when a query names this context}: exactly, or (for LIST only) as a namespace query ending in a
     * colon, such as {@code base:}, {@code qemu:} or {@code qemu:dirty-bitmap:}
     *
     * @param query the query of the client
     * @param list  true for LIST_META_CONTEXT, false for SET_META_CONTEXT, which takes only full names
     */
    boolean answers(String query, boolean list) {
        if (query.equals(name)) return true;
        return list && query.endsWith(":") && name.startsWith(query);
    }

    /**
     * {@return this context's runs of a range of the device}, at most maxRuns, in order from offset; they may cover
     * only a prefix of the range
     */
    List<Run> runs(BlockDevice device, long offset, long length, int maxRuns) throws IOException {
        switch (kind) {
            case ALLOCATION: {
                List<Run> runs = new ArrayList<>();
                for (Extent e : device.extents(offset, length, maxRuns)) {
                    runs.add(new Run(e.offset(), e.length(), e.hole() ? STATE_HOLE | STATE_ZERO : 0));
                }
                return runs;
            }
            case DIRTY_BITMAP: {
                List<Run> runs = new ArrayList<>();
                for (Extent e : tracker.changedRuns(offset, length, maxRuns)) {
                    runs.add(new Run(e.offset(), e.length(), e.hole() ? 0 : STATE_DIRTY));
                }
                return runs;
            }
            default: {
                List<Run> runs = new ArrayList<>();
                depths(device, 1, offset, length, maxRuns, runs);
                return runs;
            }
        }
    }

    /** {@return the status of a range the runs said nothing about}: data, changed, or the outermost layer */
    int unknownStatus() {
        return kind == Kind.ALLOCATION ? 0 : 1;
    }

    /**
     * Appends the allocation depths of [offset, offset + length) to runs, below device at depth: each
     * {@link LayeredDevice} in the filter stack holds some ranges at its depth and passes the others one deeper; the
     * device at the bottom holds everything that reaches it, holes included, as qemu counts a raw file (depth 1).
     */
    private static void depths(BlockDevice device, int depth, long offset, long length, int maxRuns, List<Run> runs)
            throws IOException {
        BlockDevice layer = device;
        while (!(layer instanceof LayeredDevice) && layer instanceof FilterDevice) layer = ((FilterDevice) layer).wrapped();
        if (!(layer instanceof LayeredDevice)) {
            add(runs, offset, length, depth);
            return;
        }
        BlockDevice below = ((FilterDevice) layer).wrapped();
        long end = offset + length;
        long covered = offset;
        for (Extent e : ((LayeredDevice) layer).ownRuns(offset, length, maxRuns)) {
            long from = Math.max(covered, e.offset());
            long to = Math.min(end, e.end());
            if (from != covered || to <= from || runs.size() >= maxRuns) return;
            if (e.hole()) {
                depths(below, depth + 1, from, to - from, maxRuns, runs);
                if (runs.isEmpty() || runs.get(runs.size() - 1).end() != to) return;
            } else {
                add(runs, from, to - from, depth);
            }
            covered = to;
        }
    }

    /** Appends a run, merged into the last one when it continues it with the same status. */
    private static void add(List<Run> runs, long offset, long length, int status) {
        Run last = runs.isEmpty() ? null : runs.get(runs.size() - 1);
        if (last != null && last.status() == status && last.end() == offset) {
            runs.set(runs.size() - 1, new Run(last.offset(), last.length() + length, status));
        } else {
            runs.add(new Run(offset, length, status));
        }
    }
}

package io.pagewise.nbd.server;

import static io.pagewise.nbd.wire.Protocol.BASE_ALLOCATION;
import static io.pagewise.nbd.wire.Protocol.BASE_ALLOCATION_ID;

import io.pagewise.device.BlockDevice;
import io.pagewise.device.ChangeTracker;
import java.util.ArrayList;
import java.util.List;

/**
 * A meta context an export offers: {@code base:allocation} (the device's map of holes, when it has one) or
 * {@code qemu:dirty-bitmap:NAME} for each {@link ChangeTracker} in its filter stack. The id is what SET_META_CONTEXT
 * answers and BLOCK_STATUS chunks carry: 1 for base:allocation, 2 and up for the bitmaps in the order found.
 *
 * @param id      the context id on the wire
 * @param name    the context's full name
 * @param tracker the dirty bitmap it reads, or null for base:allocation
 */
record MetaContext(int id, String name, ChangeTracker tracker) {
    /** The prefix of qemu's dirty bitmap contexts, and the LIST query for all of them. */
    static final String DIRTY_BITMAP = "qemu:dirty-bitmap:";
    /** NBD_STATE_DIRTY, the one flag of a dirty bitmap context: set for a changed range. */
    static final int STATE_DIRTY = 1;
    /** The most contexts a SET_META_CONTEXT may select: each BLOCK_STATUS answers one chunk for each. */
    static final int MAX_SELECTED = 64;

    static final MetaContext ALLOCATION = new MetaContext(BASE_ALLOCATION_ID, BASE_ALLOCATION, null);

    /** {@return the contexts an export's device offers}, in id order */
    static List<MetaContext> offeredBy(BlockDevice device) {
        List<MetaContext> offered = new ArrayList<>();
        if (device.canExtents()) offered.add(ALLOCATION);
        int id = BASE_ALLOCATION_ID + 1;
        for (ChangeTracker tracker : ChangeTracker.find(device)) {
            offered.add(new MetaContext(id++, DIRTY_BITMAP + tracker.bitmapName(), tracker));
        }
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
}

package io.pagewise.device;

import io.pagewise.Extent;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * A named record of which ranges of a device changed, such as a dirty bitmap: what an incremental backup copies. A
 * device (most often a filter) implements it to offer its record; the NBD server offers each one it finds in an
 * export's filter stack ({@link #find}) as the meta context {@code qemu:dirty-bitmap:NAME}, and an NBD client device
 * that selected such a context reads it through this interface.
 */
public interface ChangeTracker {
    /** {@return the record's name, as in {@code qemu:dirty-bitmap:NAME}}: not empty */
    String bitmapName();

    /**
     * The changed and unchanged runs of a range, at most maxRuns of them, in order from offset; {@link Extent#hole()}
     * true means unchanged. A record that cannot vouch for a range reports it changed.
     *
     * @param offset  the start of the range
     * @param length  the length of the range
     * @param maxRuns the most runs the caller will use, at least 1
     * @return at least one run, covering a prefix of the range or all of it
     * @throws IOException when the record cannot be read
     */
    List<Extent> changedRuns(long offset, long length, int maxRuns) throws IOException;

    /**
     * {@return the change trackers of a device and of the devices it wraps}, outermost first: the device itself when
     * it is one, then down through each {@link FilterDevice#wrapped()}. The first of a name hides later ones.
     *
     * @param device the device, typically the top of a filter stack
     */
    static List<ChangeTracker> find(BlockDevice device) {
        List<ChangeTracker> found = new ArrayList<>();
        for (BlockDevice d = device; d != null; d = d instanceof FilterDevice ? ((FilterDevice) d).wrapped() : null) {
            if (d instanceof ChangeTracker) {
                ChangeTracker tracker = (ChangeTracker) d;
                if (found.stream().noneMatch(t -> t.bitmapName().equals(tracker.bitmapName()))) found.add(tracker);
            }
        }
        return found;
    }
}

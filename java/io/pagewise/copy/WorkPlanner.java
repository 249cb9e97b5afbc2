package io.pagewise.copy;

import io.pagewise.Extent;
import io.pagewise.device.BlockDevice;
import io.pagewise.device.ChangeTracker;
import java.io.IOException;
import java.util.List;
import java.util.concurrent.BlockingQueue;

/**
 * The copy's planning, in the calling thread: walks the source's allocation map (and, for an incremental copy, the
 * change record) and queues the {@link CopyWork} the workers do, data to copy and holes to zero, in whole blocks of
 * both devices.
 */
final class WorkPlanner {
    /** Zero ranges are handed to the workers in pieces no longer than this, so that several zero at once. */
    private static final long MAX_ZERO_REQUEST = 1L << 30;
    /** Runs asked of the source's map at once: enough to keep the queue fed, few enough to bound the list. */
    private static final int MAX_EXTENTS = 4096;
    /**
     * The most of the source's map asked for at once; a device answers less when it must (an NBD server with compact
     * headers 1 GiB), and with 64-bit lengths a sparse image's map is a few requests instead of one per GiB.
     */
    private static final long MAP_WINDOW = 1L << 50;

    private final BlockDevice source;
    private final BlockingQueue<CopyWork> queue;
    private final int requestSize;
    private final int alignment;
    private final SharedCopyState run;

    WorkPlanner(CopySetup setup, BlockingQueue<CopyWork> queue, SharedCopyState run) {
        this.source = setup.source();
        this.queue = queue;
        this.requestSize = setup.requestSize();
        this.alignment = setup.alignment();
        this.run = run;
    }

    /**
     * Queues the changed runs of the source up to until, each as its data and holes; unchanged runs are only counted
     * as done.
     */
    void queueChanged(ChangeTracker changes, long until) throws IOException, InterruptedException {
        long position = 0;
        while (position < until && !run.stopped()) {
            List<Extent> runs;
            try {
                runs = changes.changedRuns(position, Math.min(until - position, MAP_WINDOW), MAX_EXTENTS);
            } catch (IOException e) {
                throw new CopyException("reading the dirty bitmap " + changes.bitmapName() + " of " + source.name()
                        + " at offset " + position + " failed: " + e.getMessage(), position, e);
            }
            long mapped = position;
            long described = position;
            // position stays on a multiple of the alignment (or at until): a record finer than the destination's
            // block copies the whole blocks its changes touch, and skips only whole unchanged blocks.
            for (Extent changed : runs) {
                long start = Math.max(position, changed.offset());
                long end = Math.min(until, changed.end());
                if (end <= position) continue;
                described = end;
                // A gap in the record is copied: it is only ever a cost, never a missed change.
                if (start > position) position = queueAligned(position, start, until);
                if (changed.hole()) {
                    long skipEnd = alignDown(end, until);
                    if (skipEnd > position) {
                        run.finished(skipEnd - position);
                        position = skipEnd;
                    }
                } else if (end > position) {
                    position = queueAligned(position, end, until);
                }
                if (run.stopped()) break;
            }
            // Only an unchanged run smaller than a block was described: copied with what follows it.
            if (position == mapped && described > position && !run.stopped()) {
                position = queueAligned(position, described, until);
            }
            if (position == mapped && !run.stopped()) {
                throw new CopyException("the dirty bitmap " + changes.bitmapName() + " of " + source.name()
                        + " described nothing at offset " + position, position, null);
            }
        }
    }

    /** Queues [from, to rounded up to the alignment, at most until) as queueWork does; returns where it ended. */
    private long queueAligned(long from, long to, long until) throws IOException, InterruptedException {
        long end = alignUp(to, until);
        queueWork(from, end);
        return end;
    }

    /** Queues [from, to) of the source as its allocation map describes it: data to copy, holes to zero. */
    void queueWork(long from, long to) throws IOException, InterruptedException {
        long position = from;
        while (position < to && !run.stopped()) {
            long mapped = position;
            List<Extent> extents;
            try {
                extents = source.extents(position, Math.min(to - position, MAP_WINDOW), MAX_EXTENTS);
            } catch (IOException e) {
                throw new CopyException("reading the allocation map of " + source.name() + " at offset " + position
                        + " failed: " + e.getMessage(), position, e);
            }
            long described = position;
            for (Extent e : extents) {
                long start = Math.min(to, Math.max(position, e.offset()));
                long end = Math.min(to, e.end());
                if (end <= position) continue;
                described = end;
                // A gap in the map is copied as data: it is only ever a cost, never a wrong byte. So are the edges of
                // a hole that do not fill whole blocks, and data grows to the end of its last block.
                if (!e.hole()) {
                    position = queueRange(position, alignUp(end, to), false);
                } else {
                    long holeStart = alignUp(start, to);
                    long holeEnd = alignDown(end, to);
                    if (holeStart > position) position = queueRange(position, holeStart, false);
                    if (holeEnd > position) position = queueRange(position, holeEnd, true);
                }
                if (run.stopped()) break;
            }
            // Only a hole smaller than a block was described: copied as data with what follows it.
            if (position == mapped && described > position && !run.stopped()) {
                position = queueRange(position, alignUp(described, to), false);
            }
            if (position == mapped && !run.stopped()) {
                throw new CopyException(source.name() + " described nothing at offset " + position, position, null);
            }
        }
    }

    /** offset rounded down to a multiple of the alignment, unless it is limit (the end of what is queued). */
    private long alignDown(long offset, long limit) {
        return offset == limit ? limit : offset / alignment * alignment;
    }

    /** offset rounded up to a multiple of the alignment, at most limit. */
    private long alignUp(long offset, long limit) {
        return Math.min(limit, (offset + alignment - 1) / alignment * alignment);
    }

    private long queueRange(long position, long end, boolean hole) throws InterruptedException {
        long pieceLimit = hole ? MAX_ZERO_REQUEST : requestSize;
        while (position < end && !run.stopped()) {
            // Pieces end on multiples of their size so that data requests stay aligned after a hole.
            long next = Math.min(end, (position / pieceLimit + 1) * pieceLimit);
            queue.put(new CopyWork(position, next - position, hole, false));
            position = next;
        }
        return position;
    }
}

package io.pagewise.policy;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The writes in progress on a DIRECT file, each as the aligned span it writes and the edge blocks it reads, changes
 * and writes back whole. Such a block must not be written by anyone else between that read and that write, or the
 * other write is undone, bytes outside either caller's range included. A write waits until none in progress
 * conflicts with it: its edge blocks meet another's span, or another's edge blocks meet its span. Aligned writes
 * have no edge blocks and never wait for one another. A write that goes through the page cache ({@link #enterAlone})
 * is all edge: it waits for, and keeps out, every write that meets its span.
 *
 * <p>An aligned write while no write with edges is in progress, the common case, only counts itself in and out
 * ({@link #unlisted}): no lock, no list, since it conflicts with nothing else (from 4 threads the gate's monitor,
 * taken twice per 4 KiB write, cost DIRECT writes 1-2.5 % against FileChannel's). A write with edges
 * first announces itself ({@link #edged}), then waits until no unlisted write is left; aligned writes that see the
 * announcement are listed and checked as before. Both sides write their counter before they read the other's, so
 * at least one of them sees the other.
 */
final class BlockGate {
    /** One write in progress: [start, end), and the edge blocks at head and tail (-1 for none). */
    static final class Pass {
        final long start;
        final long end;
        final long head;
        final long tail;
        /** Whether the whole span counts as an edge. */
        final boolean alone;

        Pass(long start, long end, long head, long tail, boolean alone) {
            this.start = start;
            this.end = end;
            this.head = head;
            this.tail = tail;
            this.alone = alone;
        }

        private boolean edged() {
            return alone || head >= 0 || tail >= 0;
        }
    }

    /** What {@link #enter} returns for an aligned write that was counted, not listed. */
    private static final Pass UNLISTED = new Pass(0, 0, -1, -1, false);

    private final int block;
    /** Guarded by this. */
    private final List<Pass> inProgress = new ArrayList<>();
    /** Aligned writes in progress that are in no list. */
    private final AtomicInteger unlisted = new AtomicInteger();
    /** Writes with edges that have announced themselves and not left. */
    private final AtomicInteger edged = new AtomicInteger();

    BlockGate(int block) {
        this.block = block;
    }

    /** Waits, not interruptibly, until [start, end) with those edge blocks conflicts with no write in progress. */
    Pass enter(long start, long end, long head, long tail) {
        if (head < 0 && tail < 0) {
            unlisted.incrementAndGet();
            if (edged.get() == 0) return UNLISTED;
            leaveUnlisted(); // a write with edges is coming or in progress: be listed, so that it sees this span
        }
        return enter(new Pass(start, end, head, tail, false));
    }

    /**
     * Waits, not interruptibly, until no write in progress meets [start, end), and keeps every such write out until
     * {@link #leave}: for a write through the page cache, whose pages the kernel writes back whole, blocks of other
     * writes in them included.
     */
    Pass enterAlone(long start, long end) {
        return enter(new Pass(start, end, -1, -1, true));
    }

    private Pass enter(Pass pass) {
        boolean edges = pass.edged();
        if (edges) edged.incrementAndGet();
        boolean interrupted = false;
        synchronized (this) {
            // An unlisted write's span is not known: one with edges waits until every such write has left.
            while ((edges && unlisted.get() > 0) || conflicts(pass)) {
                try {
                    wait();
                } catch (InterruptedException e) {
                    interrupted = true; // a write half done must not be abandoned: finish, then pass the interrupt on
                }
            }
            inProgress.add(pass);
        }
        if (interrupted) Thread.currentThread().interrupt();
        return pass;
    }

    void leave(Pass pass) {
        if (pass == UNLISTED) {
            leaveUnlisted();
            return;
        }
        synchronized (this) {
            inProgress.remove(pass);
            if (pass.edged()) edged.decrementAndGet();
            notifyAll();
        }
    }

    private void leaveUnlisted() {
        // The last unlisted write out wakes a write with edges that waits for it.
        if (unlisted.decrementAndGet() == 0 && edged.get() > 0) {
            synchronized (this) {
                notifyAll();
            }
        }
    }

    private boolean conflicts(Pass pass) {
        for (Pass other : inProgress) {
            if (edgesMeet(pass, other) || edgesMeet(other, pass)) return true;
            if ((pass.alone || other.alone) && pass.start < other.end && other.start < pass.end) return true;
        }
        return false;
    }

    private boolean edgesMeet(Pass edges, Pass span) {
        return meets(edges.head, span) || meets(edges.tail, span);
    }

    private boolean meets(long edge, Pass span) {
        return edge >= 0 && edge < span.end && edge + block > span.start;
    }
}

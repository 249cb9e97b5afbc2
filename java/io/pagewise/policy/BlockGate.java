package io.pagewise.policy;

import java.util.ArrayList;
import java.util.List;

/**
 * The writes in progress on a DIRECT file, each as the aligned span it writes and the edge blocks it reads, changes
 * and writes back whole. Such a block must not be written by anyone else between that read and that write, or the
 * other write is undone, bytes outside either caller's range included. A write waits until none in progress
 * conflicts with it: its edge blocks meet another's span, or another's edge blocks meet its span. Aligned writes
 * have no edge blocks and never wait for one another. A write that goes through the page cache ({@link #enterAlone})
 * is all edge: it waits for, and keeps out, every write that meets its span.
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
    }

    private final int block;
    private final List<Pass> inProgress = new ArrayList<>();

    BlockGate(int block) {
        this.block = block;
    }

    /** Waits, not interruptibly, until [start, end) with those edge blocks conflicts with no write in progress. */
    Pass enter(long start, long end, long head, long tail) {
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
        boolean interrupted = false;
        synchronized (this) {
            while (conflicts(pass)) {
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

    synchronized void leave(Pass pass) {
        inProgress.remove(pass);
        notifyAll();
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

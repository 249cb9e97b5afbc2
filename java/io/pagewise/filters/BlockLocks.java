package io.pagewise.filters;

import java.util.concurrent.locks.ReentrantLock;

/**
 * Locks for numbered blocks, striped: a caller locks every block of a request at once, in ascending stripe order so
 * that two requests can never wait for each other, and unlocks what it got.
 */
final class BlockLocks {
    private final ReentrantLock[] stripes;

    BlockLocks(int stripeCount) {
        stripes = new ReentrantLock[stripeCount];
        for (int i = 0; i < stripeCount; i++) stripes[i] = new ReentrantLock();
    }

    /** What {@link #lock} holds, to unlock. */
    interface Held {
        void unlock();
    }

    /** Locks the stripes of blocks first..last (inclusive). */
    Held lock(long first, long last) {
        int n = stripes.length;
        boolean[] wanted = new boolean[n];
        if (last - first + 1 >= n) {
            java.util.Arrays.fill(wanted, true);
        } else {
            for (long b = first; b <= last; b++) wanted[(int) Long.remainderUnsigned(b, n)] = true;
        }
        int locked = 0;
        try {
            for (; locked < n; locked++) {
                if (wanted[locked]) stripes[locked].lock();
            }
        } catch (RuntimeException | Error e) {
            unlock(wanted, locked);
            throw e;
        }
        return () -> unlock(wanted, n);
    }

    private void unlock(boolean[] wanted, int upTo) {
        for (int i = upTo - 1; i >= 0; i--) {
            if (wanted[i]) stripes[i].unlock();
        }
    }
}

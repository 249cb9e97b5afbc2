package io.pagewise.internal;

import java.nio.channels.ClosedChannelException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Who is using an open file, for a close that waits for them: every operation enters and exits; close shuts the gate
 * to new ones (they fail with {@link ClosedChannelException} naming the file), waits until the last one has left,
 * and then closes the descriptor, so that no call ever reaches a descriptor number reused since.
 */
public final class UseGate {
    private static final int CLOSING = 1 << 30;

    private final String name;
    /** Operations in progress, plus CLOSING once close has begun. */
    private final AtomicInteger users = new AtomicInteger();
    /** Opened once the descriptor is closed: a second close waits for the first, as Channel asks. */
    private final CountDownLatch closed = new CountDownLatch(1);

    /** @param name what the file is called in the message of a call after close */
    public UseGate(String name) {
        this.name = name;
    }

    /** Enters for one operation; fails once close has begun. */
    public void enter() throws ClosedChannelException {
        int state = users.incrementAndGet();
        if (state > CLOSING) {
            exit();
            throw new ClosedWithMessage(name + " is closed");
        }
    }

    /** Leaves after an operation; the last one out wakes a waiting close. */
    public void exit() {
        if (users.decrementAndGet() == CLOSING) {
            synchronized (users) {
                users.notifyAll();
            }
        }
    }

    /** {@return false once close has begun} */
    public boolean isOpen() {
        return users.get() < CLOSING;
    }

    /** Fails as {@link #enter()} would once close has begun, without entering: for calls that have nothing to do. */
    public void checkOpen() throws ClosedChannelException {
        if (!isOpen()) throw new ClosedWithMessage(name + " is closed");
    }

    /**
     * Begins the close and waits, uninterruptibly, until the operations in progress are done. Returns false when
     * another close began first: this one has then waited for that one to end, and has nothing left to do.
     * After true, the caller closes what it holds and then calls {@link #closed()}.
     */
    public boolean beginClose() {
        int state;
        do {
            state = users.get();
            if (state >= CLOSING) {
                Uninterruptibly.run(closed::await);
                return false;
            }
        } while (!users.compareAndSet(state, state | CLOSING));
        synchronized (users) {
            boolean interrupted = false;
            while (users.get() != CLOSING) {
                try {
                    users.wait(10);
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
            if (interrupted) Thread.currentThread().interrupt();
        }
        return true;
    }

    /** The close is done: a second close waiting in {@link #beginClose()} returns. */
    public void closed() {
        closed.countDown();
    }
}

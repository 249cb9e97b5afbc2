package io.pagewise.internal;

/** Runs a blocking call to completion despite interrupts, then restores the thread's interrupt status. */
public final class Uninterruptibly {
    /** A call that may be interrupted. */
    public interface Blocking {
        void run() throws InterruptedException;
    }

    private Uninterruptibly() {}

    public static void run(Blocking call) {
        boolean interrupted = false;
        while (true) {
            try {
                call.run();
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) Thread.currentThread().interrupt();
    }
}

package io.pagewise.lucene;

import java.io.IOException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.apache.lucene.util.ThreadInterruptedException;

/**
 * The threads that wait for the disk on behalf of merges and flushes: the writes of outputs that bypass or drop the
 * page cache, and the read windows' prefetches and evictions. A merge thread that waited itself lost its CPU at every
 * wait; with another thread on the CPU (a searcher, a second merge) each wait cost it a turn of the scheduler as well,
 * and a force-merge of 1.6 GB spent 4 s of its 24 in these calls (2.9 s in O_DIRECT writes, 1.2 s in advice).
 *
 * <p>The threads are daemons, started as work comes and ended after {@link #IDLE_SECONDS} idle, so an idle JVM (or
 * a test framework counting threads) keeps none. Where no thread can be started, the caller does the work itself, as
 * it does when {@code -Dpagewise.lucene.background-io=false} turns this off.
 */
final class BackgroundIo {
    /** Work of several outputs and inputs at once: a merge writes about five files together. */
    static final int THREADS = 4;
    static final int IDLE_SECONDS = 1;
    static final boolean ENABLED = Boolean.parseBoolean(System.getProperty("pagewise.lucene.background-io", "true"));
    private static final Logger LOG = Logger.getLogger(BackgroundIo.class.getName());
    private static final ThreadPoolExecutor POOL = pool();
    /** Set when a thread could not be started (a sandbox that forbids it): from then on callers do their own I/O. */
    private static volatile boolean refused = !ENABLED;

    /** Disk work that may fail. */
    @FunctionalInterface
    interface Work {
        void run() throws IOException;
    }

    /**
     * The work one file's readers or writer hand over: how much of it is still running, and the first failure, which
     * the next call in the owner's thread throws.
     */
    static final class Queue {
        private int running;
        private IOException failure;

        /**
         * Runs work on a background thread, or in this thread where none can be started; throws a failure of earlier
         * work first.
         */
        void submit(Work work) throws IOException {
            throwFailure();
            if (refused) {
                work.run();
                return;
            }
            synchronized (this) {
                running++;
            }
            try {
                POOL.execute(() -> runAndFinish(work));
            } catch (RejectedExecutionException | SecurityException e) {
                finished(null);
                refuse(e);
                work.run();
            }
        }

        private void runAndFinish(Work work) {
            IOException failed = null;
            try {
                work.run();
            } catch (IOException e) {
                failed = e;
            } catch (RuntimeException e) {
                failed = new IOException(e.getMessage(), e);
            }
            finished(failed);
        }

        private synchronized void finished(IOException failed) {
            running--;
            if (failed != null) {
                if (failure == null) failure = failed; else if (failure != failed) failure.addSuppressed(failed);
            }
            notifyAll();
        }

        /** Waits until at most {@code most} pieces of work are still running. */
        synchronized void awaitAtMost(int most) {
            while (running > most) {
                try {
                    wait();
                } catch (InterruptedException e) {
                    throw new ThreadInterruptedException(e);
                }
            }
        }

        /** Waits until all work is done, then throws its first failure. */
        void finish() throws IOException {
            awaitAtMost(0);
            throwFailure();
        }

        /** Waits until all work is done, even through an interrupt, which it passes on; returns its first failure. */
        synchronized IOException drain() {
            boolean interrupted = false;
            while (running > 0) {
                try {
                    wait();
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
            if (interrupted) Thread.currentThread().interrupt();
            return failure;
        }

        synchronized void throwFailure() throws IOException {
            if (failure != null) throw failure;
        }
    }

    private static void refuse(RuntimeException why) {
        if (!refused) {
            refused = true;
            LOG.log(Level.WARNING, "pagewise-lucene: cannot start I/O threads (" + why
                    + "); merges and flushes wait for the disk themselves");
        }
    }

    private static ThreadPoolExecutor pool() {
        AtomicInteger made = new AtomicInteger();
        ThreadFactory factory = work -> {
            Thread thread = new Thread(work, "pagewise-lucene-io-" + made.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        };
        ThreadPoolExecutor pool = new ThreadPoolExecutor(THREADS, THREADS, IDLE_SECONDS, TimeUnit.SECONDS,
                new LinkedBlockingQueue<>(), factory);
        pool.allowCoreThreadTimeOut(true);
        return pool;
    }

    private BackgroundIo() {}
}

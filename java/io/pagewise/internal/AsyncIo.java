package io.pagewise.internal;

import io.pagewise.system.NativeIOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Where asynchronous reads and writes run: on one io_uring ring shared by the JVM, reaped by one daemon thread, or,
 * where io_uring is absent or refused (Linux before 5.6, ENOSYS or EPERM under a container's seccomp profile,
 * {@code kernel.io_uring_disabled}), or where {@code -Dpagewise.async=threads} asks, on a small pool of daemon
 * threads that make the blocking calls. Requests a cache mode must run itself go to the pool in either case.
 *
 * <p>The ring's completions are handed on by the thread that reaps them: a platform thread that waits in
 * {@link RingFuture#join()} for a request of its own reaps the ring itself (the kernel wakes it, with no hand-over from
 * another thread), and the reaper thread otherwise. A stage chained without an executor runs on either, so long work
 * belongs in the {@code *Async} forms of CompletableFuture.
 */
public final class AsyncIo {
    /** Requests in flight on the ring at most; a submitter waits for room beyond it. */
    static final int RING_ENTRIES = 256;
    private static final int POOL_THREADS = Integer.getInteger("pagewise.async.threads", 8);

    private static final class Holder {
        static final AsyncIo SHARED = start();
    }

    private final IoRing ring;
    private final String path;
    private final ExecutorService pool;
    private final Semaphore room = new Semaphore(RING_ENTRIES);
    private final Map<Long, RingOp> inFlight = new ConcurrentHashMap<>();
    private final AtomicLong tags = new AtomicLong();
    /** Held by whoever takes completions off the ring: the reaper thread, or a thread waiting for its own request. */
    private final ReentrantLock reaping = new ReentrantLock();
    /** When a thread last asked to reap while it waited for its own request: the reaper thread stands aside then. */
    private volatile long waiterAsked = System.nanoTime() - STAND_ASIDE_NANOS;
    private static final long STAND_ASIDE_NANOS = 1_000_000;
    private static final int WAITER_BATCH = 32;

    private AsyncIo(IoRing ring, String path) {
        this.ring = ring;
        this.path = path;
        AtomicInteger threads = new AtomicInteger();
        ThreadPoolExecutor executor = new ThreadPoolExecutor(POOL_THREADS, POOL_THREADS, 30, TimeUnit.SECONDS,
                new LinkedBlockingQueue<>(), task -> daemon(task, "pagewise-async-" + threads.incrementAndGet()));
        executor.allowCoreThreadTimeOut(true);
        this.pool = executor;
        if (ring != null) daemon(this::reap, "pagewise-io_uring-reaper").start();
    }

    /**
     * A daemon thread of the JVM's, not of whoever asked first: in the top thread group, without their class
     * loader, so that a test framework that counts the threads its test started (Lucene's, OpenSearch's) does not
     * take the engine's for its own leak.
     */
    static Thread daemon(Runnable task, String name) {
        ThreadGroup top = Thread.currentThread().getThreadGroup();
        while (top.getParent() != null) top = top.getParent();
        Thread thread = new Thread(top, task, name);
        thread.setDaemon(true);
        thread.setContextClassLoader(null);
        return thread;
    }

    /** {@return the JVM's engine}, started at first use */
    public static AsyncIo shared() {
        return Holder.SHARED;
    }

    private static AsyncIo start() {
        String asked = System.getProperty("pagewise.async", "auto");
        if (asked.equals("threads")) return new AsyncIo(null, "threads (-Dpagewise.async=threads)");
        if (!asked.equals("auto") && !asked.equals("io_uring")) {
            return new AsyncIo(null, "threads (-Dpagewise.async=" + asked + " is none of auto, io_uring, threads)");
        }
        try {
            return new AsyncIo(IoRing.open(RING_ENTRIES), "io_uring");
        } catch (NativeIOException refused) {
            return new AsyncIo(null, "threads (io_uring_setup: " + refused.errnoName() + ")");
        } catch (LinkageError | RuntimeException e) {
            // Where the native calls did not load (the pure-Java path), their binding is not there either.
            return new AsyncIo(null, "threads (no native calls: " + e + ")");
        }
    }

    /** {@return "io_uring", or "threads (why)"} */
    public String path() {
        return path;
    }

    /** {@return whether requests can go on the ring} */
    public boolean hasRing() {
        return ring != null;
    }

    /** A blocking call, for the pool. */
    @FunctionalInterface
    public interface BlockingCall<T> {
        T call() throws Exception;
    }

    /** {@return a future of call, made on a pool thread} */
    public <T> CompletableFuture<T> onPool(BlockingCall<T> call) {
        CompletableFuture<T> future = new CompletableFuture<>();
        try {
            pool.execute(() -> {
                try {
                    future.complete(call.call());
                } catch (Throwable e) {
                    future.completeExceptionally(e);
                }
            });
        } catch (RuntimeException rejected) {
            future.completeExceptionally(rejected);
        }
        return future;
    }

    /** What a ring request reports when it is done. */
    public interface Completion {
        /** All bytes moved, or fewer where a read reached the end of the file. */
        void completed(long bytes);

        /** The kernel's -errno for the part at [offset, offset + length) that was still to do. */
        void failed(int negativeErrno, long offset, long length);
    }

    /**
     * One read or write on the ring: length bytes of a direct buffer from position, at offset. A short transfer
     * goes on with the rest, but a short read ends it where shortIsEof.
     */
    public static final class RingOp {
        final int descriptor;
        final boolean write;
        final ByteBuffer buffer;
        final int position;
        final int length;
        final long offset;
        final int flags;
        final boolean shortIsEof;
        final Completion completion;
        int done;

        public RingOp(int descriptor, boolean write, ByteBuffer buffer, int position, int length, long offset,
                      int flags, boolean shortIsEof, Completion completion) {
            this.descriptor = descriptor;
            this.write = write;
            this.buffer = buffer;
            this.position = position;
            this.length = length;
            this.offset = offset;
            this.flags = flags;
            this.shortIsEof = shortIsEof;
            this.completion = completion;
        }
    }

    /**
     * Puts ops on the ring in one submission (as many at a time as it has room for), waiting for room when it is
     * full. A submission the kernel refuses fails its ops through their completions.
     */
    public void submit(List<RingOp> ops) {
        if (ring == null) throw new IllegalStateException("no io_uring ring: " + path);
        for (int from = 0; from < ops.size(); from += RING_ENTRIES) {
            List<RingOp> part = ops.subList(from, Math.min(ops.size(), from + RING_ENTRIES));
            room.acquireUninterruptibly(part.size());
            put(part);
        }
    }

    /** Submits ops that hold their room already. */
    private void put(List<RingOp> ops) {
        int count = ops.size();
        int[] codes = new int[count];
        int[] descriptors = new int[count];
        ByteBuffer[] buffers = new ByteBuffer[count];
        int[] positions = new int[count];
        int[] lengths = new int[count];
        long[] offsets = new long[count];
        int[] flags = new int[count];
        long[] opTags = new long[count];
        for (int i = 0; i < count; i++) {
            RingOp op = ops.get(i);
            codes[i] = op.write ? IoRing.WRITE : IoRing.READ;
            descriptors[i] = op.descriptor;
            buffers[i] = op.buffer;
            positions[i] = op.position + op.done;
            lengths[i] = op.length - op.done;
            offsets[i] = op.offset + op.done;
            flags[i] = op.flags;
            opTags[i] = tags.incrementAndGet();
            inFlight.put(opTags[i], op);
        }
        try {
            ring.submit(count, codes, descriptors, buffers, positions, lengths, offsets, flags, opTags);
        } catch (NativeIOException | RuntimeException e) {
            int errno = e instanceof NativeIOException refused ? -Math.abs(refused.errno()) : -Errno.EIO;
            for (int i = 0; i < count; i++) {
                RingOp op = inFlight.remove(opTags[i]);
                if (op == null) continue;
                room.release();
                op.completion.failed(errno, offsets[i], lengths[i]);
            }
        }
    }

    /**
     * The reaper: hands each completion on, and puts the rest of a short transfer back on the ring. It stands aside
     * while threads waiting for their own requests reap, and comes back a millisecond after the last one asked.
     */
    private void reap() {
        long[] doneTags = new long[RING_ENTRIES];
        int[] results = new int[RING_ENTRIES];
        while (true) {
            if (System.nanoTime() - waiterAsked < STAND_ASIDE_NANOS) {
                LockSupport.parkNanos(this, STAND_ASIDE_NANOS);
                continue;
            }
            reaping.lock();
            try {
                handOn(doneTags, results, ring.reap(1, doneTags, results));
            } catch (NativeIOException e) {
                // Not expected of a ring that opened; waiting a little keeps a persistent failure from spinning.
                LockSupport.parkNanos(this, 10_000_000);
            } finally {
                reaping.unlock();
            }
        }
    }

    /** Completes what was reaped; under the reaping lock, so that a request taken off the ring is done once it is let go. */
    private void handOn(long[] doneTags, int[] results, int count) {
        for (int i = 0; i < count; i++) {
            RingOp op = inFlight.remove(doneTags[i]);
            if (op == null) continue;
            try {
                completed(op, results[i]);
            } catch (Throwable e) {
                // A failing completion stage must not stop the reaping; the stage's own future carries it.
            }
        }
    }

    /**
     * Reaps the ring in the calling thread until future is done: the kernel wakes the waiting thread itself, where
     * the reaper thread would wake and then hand over. False, with nothing done, when another thread is reaping
     * (the reaper thread, which stands aside from its next round on, or another waiter) or the ring failed.
     */
    boolean reapWhileWaiting(CompletableFuture<?> future) {
        waiterAsked = System.nanoTime();
        if (!reaping.tryLock()) return false;
        try {
            long[] doneTags = new long[WAITER_BATCH];
            int[] results = new int[WAITER_BATCH];
            while (!future.isDone()) {
                waiterAsked = System.nanoTime();
                handOn(doneTags, results, ring.reap(1, doneTags, results));
            }
            return true;
        } catch (NativeIOException e) {
            waiterAsked = System.nanoTime() - STAND_ASIDE_NANOS; // the reaper thread takes over
            return false;
        } finally {
            reaping.unlock();
        }
    }

    /**
     * The future of a request on the ring: {@link #join()} on a platform thread reaps the ring while it waits (a
     * virtual thread parks, leaving its carrier free); everything else is CompletableFuture's.
     */
    public static final class RingFuture<T> extends CompletableFuture<T> {
        private static final long FIRST_RETRY_NANOS = 50_000;
        private volatile AsyncIo engine;

        /** Marks the request as put on engine's ring, so that join reaps it. */
        public void onRing(AsyncIo engine) {
            this.engine = engine;
        }

        @Override
        public T join() {
            AsyncIo ring = engine;
            if (ring == null || isDone() || VirtualThreads.current()) return super.join();
            boolean interrupted = false;
            // While another thread reaps, wait for it, and ask again after a while that grows to the reaper's pause.
            for (long retry = FIRST_RETRY_NANOS; !isDone() && !ring.reapWhileWaiting(this);
                 retry = Math.min(2 * retry, STAND_ASIDE_NANOS)) {
                try {
                    get(retry, TimeUnit.NANOSECONDS);
                } catch (java.util.concurrent.TimeoutException | java.util.concurrent.ExecutionException
                         | java.util.concurrent.CancellationException notYetOrFailed) {
                    // asked again, or done: the join below returns or throws as CompletableFuture's
                } catch (InterruptedException e) {
                    interrupted = true; // join waits on, as CompletableFuture's does
                }
            }
            if (interrupted) Thread.currentThread().interrupt();
            return super.join();
        }
    }

    private void completed(RingOp op, int result) {
        if (result > 0) {
            op.done += result;
            boolean endOfFile = !op.write && op.shortIsEof && op.done < op.length;
            if (op.done < op.length && !endOfFile) {
                put(List.of(op)); // the rest, holding the same room
                return;
            }
        }
        room.release();
        if (result < 0) {
            op.completion.failed(result, op.offset + op.done, op.length - op.done);
        } else if (result == 0 && op.write) {
            // A write that moved nothing would be retried forever.
            op.completion.failed(-Errno.EIO, op.offset + op.done, op.length - op.done);
        } else {
            op.completion.completed(op.done); // all of it, or a read that reached the end of the file
        }
    }
}

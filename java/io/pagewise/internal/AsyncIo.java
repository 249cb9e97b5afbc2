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

/**
 * Where asynchronous reads and writes run: on one io_uring ring shared by the JVM, reaped by one daemon thread, or,
 * where io_uring is absent or refused (Linux before 5.6, ENOSYS or EPERM under a container's seccomp profile,
 * {@code kernel.io_uring_disabled}), or where {@code -Dpagewise.async=threads} asks, on a small pool of daemon
 * threads that make the blocking calls. Requests a cache mode must run itself go to the pool in either case.
 *
 * <p>The ring's completions are handed on by its reaper thread: a stage chained without an executor runs there, so
 * long work belongs in the {@code *Async} forms of CompletableFuture.
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
    private static Thread daemon(Runnable task, String name) {
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

    /** The reaper: hands each completion on, and puts the rest of a short transfer back on the ring. */
    private void reap() {
        long[] doneTags = new long[RING_ENTRIES];
        int[] results = new int[RING_ENTRIES];
        while (true) {
            int count;
            try {
                count = ring.reap(1, doneTags, results);
            } catch (NativeIOException e) {
                // Not expected of a ring that opened; waiting a little keeps a persistent failure from spinning.
                try {
                    Thread.sleep(10);
                } catch (InterruptedException ignored) {
                    // the reaper runs for the JVM's life
                }
                continue;
            }
            for (int i = 0; i < count; i++) {
                RingOp op = inFlight.remove(doneTags[i]);
                if (op == null) continue;
                try {
                    completed(op, results[i]);
                } catch (Throwable e) {
                    // A failing completion stage must not stop the reaper; the stage's own future carries it.
                }
            }
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

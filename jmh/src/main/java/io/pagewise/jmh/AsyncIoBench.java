package io.pagewise.jmh;

import io.pagewise.CacheMode;
import io.pagewise.Native;
import io.pagewise.StorageFile;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;

/**
 * 4 KiB random O_DIRECT reads or writes over a whole file for a fixed time, printing one RESULT line: the I/Os a
 * second and the process's CPU time per I/O. Run by {@code jmh/async-io.sh} beside fio. The workload runs for
 * WARMUP seconds first, which are not counted, as JMH's warm-up iterations are not: the JIT compiles the hot path
 * then, not inside the measured seconds (fio's twin is {@code --ramp_time}).
 *
 * <pre>
 * AsyncIoBench FILE SECONDS read|write METHOD N [WARMUP (0)]
 *   pagewise-async N    one thread keeps N requests in flight through StorageFile.readAsync/writeAsync (DIRECT)
 *   filechannel N       N threads, each a blocking FileChannel call at a time (O_DIRECT, ExtendedOpenOption.DIRECT)
 *   pagewise-virtual N  N virtual threads, each a blocking StorageFile call at a time (DIRECT)
 *   filechannel-virtual N  N virtual threads, each a blocking FileChannel call at a time (O_DIRECT)
 * </pre>
 */
public final class AsyncIoBench {
    private static final int BLOCK = 4096;

    private AsyncIoBench() {}

    public static void main(String[] args) throws Exception {
        Path path = Path.of(args[0]);
        long seconds = Long.parseLong(args[1]);
        boolean write = args[2].equals("write");
        String method = args[3];
        int n = Integer.parseInt(args[4]);
        long warmupSeconds = args.length > 5 ? Long.parseLong(args[5]) : 0;
        long blocks;
        try (FileChannel channel = FileChannel.open(path, StandardOpenOption.READ)) {
            blocks = channel.size() / BLOCK;
        }
        LongAdder done = new LongAdder();
        AtomicBoolean stop = new AtomicBoolean();
        List<Thread> threads = new ArrayList<>();
        Runnable body;
        switch (method) {
            case "pagewise-async" -> body = () -> pagewiseAsync(path, write, n, blocks, done, stop);
            case "filechannel", "filechannel-virtual" -> body = () -> fileChannel(path, write, blocks, done, stop);
            case "pagewise-virtual" -> body = () -> pagewiseBlocking(path, write, blocks, done, stop);
            default -> throw new IllegalArgumentException("method " + method);
        }
        int count = method.equals("pagewise-async") ? 1 : n;
        for (int i = 0; i < count; i++) {
            Thread thread = method.endsWith("-virtual") ? virtual(body) : new Thread(body);
            thread.start();
            threads.add(thread);
        }
        Thread.sleep(warmupSeconds * 1000);
        long iosBefore = done.sum();
        long cpuBefore = processCpuNanos();
        long start = System.nanoTime();
        Thread.sleep(seconds * 1000);
        long ios = done.sum() - iosBefore;
        long cpu = processCpuNanos() - cpuBefore;
        double elapsed = (System.nanoTime() - start) / 1e9;
        stop.set(true);
        for (Thread thread : threads) thread.join();
        System.out.printf("RESULT op=%s method=%s n=%d iops=%.0f cpu_us_per_io=%.2f ios=%d seconds=%.1f async=%s binding=%s%n",
                write ? "write" : "read", method, n, ios / elapsed, cpu / 1e3 / Math.max(1, ios), ios, elapsed,
                Native.asyncPath().replace(' ', '_'), Native.binding());
    }

    private static Thread virtual(Runnable body) {
        try {
            Object builder = Thread.class.getMethod("ofVirtual").invoke(null);
            return (Thread) Class.forName("java.lang.Thread$Builder").getMethod("unstarted", Runnable.class)
                    .invoke(builder, body);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("virtual threads need JDK 21 or later", e);
        }
    }

    private static ByteBuffer block() {
        ByteBuffer buffer = ByteBuffer.allocateDirect(2 * BLOCK).alignedSlice(BLOCK).limit(BLOCK);
        for (int i = 0; i < BLOCK; i++) buffer.put(i, (byte) i);
        return buffer;
    }

    private static long randomOffset(long blocks) {
        return ThreadLocalRandom.current().nextLong(blocks) * BLOCK;
    }

    /**
     * Keeps depth requests in flight from one thread, as fio does: each completion puts its slot's next request on
     * the ring at once, from the stage chained to it, which runs on this thread while it waits in join (it reaps the
     * ring itself); the other slots do not wait for the oldest.
     */
    private static void pagewiseAsync(Path path, boolean write, int depth, long blocks, LongAdder done, AtomicBoolean stop) {
        try (StorageFile file = open(path, write)) {
            java.util.concurrent.atomic.AtomicReferenceArray<CompletableFuture<Integer>> inFlight =
                    new java.util.concurrent.atomic.AtomicReferenceArray<>(depth);
            ByteBuffer[] buffers = new ByteBuffer[depth];
            for (int i = 0; i < depth; i++) {
                buffers[i] = block();
                start(file, buffers, inFlight, i, write, blocks, done, stop);
            }
            while (!stop.get()) joinQuietly(inFlight.get(0));
            for (int i = 0; i < depth; i++) {
                // A slot's last request is the one whose stage found stop set.
                CompletableFuture<Integer> last;
                do {
                    last = inFlight.get(i);
                    joinQuietly(last);
                } while (last != inFlight.get(i));
            }
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
        if (FAILURE.get() != null) throw new IllegalStateException("a request failed", FAILURE.get());
    }

    /** Joins the request itself, whose join reaps the ring (a stage derived from it would only park); failures go to FAILURE. */
    private static void joinQuietly(CompletableFuture<Integer> request) {
        try {
            request.join();
        } catch (java.util.concurrent.CompletionException reported) {
            // the request's stage has recorded it
        }
    }

    private static final java.util.concurrent.atomic.AtomicReference<Throwable> FAILURE =
            new java.util.concurrent.atomic.AtomicReference<>();

    private static void start(StorageFile file, ByteBuffer[] buffers,
                              java.util.concurrent.atomic.AtomicReferenceArray<CompletableFuture<Integer>> inFlight,
                              int slot, boolean write, long blocks, LongAdder done, AtomicBoolean stop) {
        CompletableFuture<Integer> request = submit(file, buffers[slot], write, blocks);
        inFlight.set(slot, request);
        request.whenComplete((n, e) -> {
            if (e != null) {
                FAILURE.compareAndSet(null, e);
                stop.set(true);
                return;
            }
            done.increment();
            if (!stop.get()) start(file, buffers, inFlight, slot, write, blocks, done, stop);
        });
    }

    private static CompletableFuture<Integer> submit(StorageFile file, ByteBuffer buffer, boolean write, long blocks) {
        buffer.clear().limit(BLOCK);
        long offset = randomOffset(blocks);
        return write ? file.writeAsync(buffer, offset) : file.readAsync(buffer, offset);
    }

    private static StorageFile open(Path path, boolean write) throws java.io.IOException {
        return write ? StorageFile.open(path, CacheMode.DIRECT, StandardOpenOption.READ, StandardOpenOption.WRITE)
                : StorageFile.open(path, CacheMode.DIRECT, StandardOpenOption.READ);
    }

    // One file per thread, as each of the peers' threads would open its own.
    private static void pagewiseBlocking(Path path, boolean write, long blocks, LongAdder done, AtomicBoolean stop) {
        try (StorageFile file = open(path, write)) {
            ByteBuffer buffer = block();
            while (!stop.get()) {
                buffer.clear().limit(BLOCK);
                long offset = randomOffset(blocks);
                if (write) file.write(buffer, offset); else file.read(buffer, offset);
                done.increment();
            }
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static void fileChannel(Path path, boolean write, long blocks, LongAdder done, AtomicBoolean stop) {
        OpenOption direct = directOption();
        try (FileChannel channel = write
                ? FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE, direct)
                : FileChannel.open(path, StandardOpenOption.READ, direct)) {
            ByteBuffer buffer = block();
            while (!stop.get()) {
                buffer.clear().limit(BLOCK);
                long offset = randomOffset(blocks);
                if (write) channel.write(buffer, offset); else channel.read(buffer, offset);
                done.increment();
            }
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static OpenOption directOption() {
        try {
            return (OpenOption) Class.forName("com.sun.nio.file.ExtendedOpenOption").getField("DIRECT").get(null);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("ExtendedOpenOption.DIRECT", e);
        }
    }

    private static long processCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
    }
}

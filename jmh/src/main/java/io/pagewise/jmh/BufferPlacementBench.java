package io.pagewise.jmh;

import io.pagewise.CacheMode;
import io.pagewise.IoBuffers;
import io.pagewise.StorageFile;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Sequential O_DIRECT reads and writes (CacheMode.DIRECT) of a whole file, from buffers of
 * {@link IoBuffers#allocate} (huge pages where the kernel gives them) and of {@link ByteBuffer#allocateDirect}
 * (scattered 4 KiB pages), alternating within each round; prints a RESULT line per run and the median ratio.
 *
 * <pre>
 * BufferPlacementBench FILE MIB REQUEST_KIB THREADS ROUNDS
 *   each of THREADS threads reads (then writes) its own MIB / THREADS stretch of FILE in REQUEST_KIB requests
 * </pre>
 */
public final class BufferPlacementBench {
    private BufferPlacementBench() {}

    public static void main(String[] args) throws Exception {
        Path path = Path.of(args[0]);
        long bytes = Long.parseLong(args[1]) << 20;
        int request = Integer.parseInt(args[2]) << 10;
        int threads = Integer.parseInt(args[3]);
        int rounds = Integer.parseInt(args[4]);
        long stretch = bytes / threads / request * request;
        if (stretch == 0) throw new IllegalArgumentException("the file is too small for " + threads + " threads");
        try (StorageFile file = StorageFile.open(path, CacheMode.DIRECT, StandardOpenOption.CREATE,
                StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            run(file, true, false, stretch, request, threads); // lays the file out
            for (String op : new String[] {"write", "read"}) {
                List<Double> ratios = new ArrayList<>();
                for (int round = 1; round <= rounds; round++) {
                    // Which goes first alternates, so that neither always meets a cache the other warmed.
                    boolean hugeFirst = round % 2 == 1;
                    double first = run(file, op.equals("write"), hugeFirst, stretch, request, threads);
                    double second = run(file, op.equals("write"), !hugeFirst, stretch, request, threads);
                    double huge = hugeFirst ? first : second;
                    double scattered = hugeFirst ? second : first;
                    System.out.printf(Locale.ROOT, "RESULT op=%s round=%d request_kib=%d threads=%d huge_pages_mb_s=%.0f"
                            + " allocate_direct_mb_s=%.0f ratio=%.2f%n", op, round, request >> 10, threads, huge,
                            scattered, huge / scattered);
                    ratios.add(huge / scattered);
                }
                ratios.sort(null);
                System.out.printf(Locale.ROOT, "%s: IoBuffers / allocateDirect throughput, median of %d rounds: %.2f%n",
                        op, rounds, ratios.get(ratios.size() / 2));
            }
        }
    }

    /** Every thread through its stretch once; MB/s. */
    private static double run(StorageFile file, boolean write, boolean hugePages, long stretch, int request, int threads)
            throws Exception {
        List<Thread> workers = new ArrayList<>();
        List<Throwable> failures = new ArrayList<>();
        long start = System.nanoTime();
        for (int t = 0; t < threads; t++) {
            long from = t * stretch;
            Thread worker = new Thread(() -> {
                try {
                    ByteBuffer buffer = hugePages ? IoBuffers.allocate(request)
                            : ByteBuffer.allocateDirect(request + 4096).alignedSlice(4096).slice(0, request);
                    for (long at = from; at < from + stretch; at += request) {
                        buffer.clear();
                        int done = write ? file.write(buffer, at) : file.read(buffer, at);
                        if (done != request) throw new IllegalStateException("short " + done + " at " + at);
                    }
                } catch (Throwable e) {
                    synchronized (failures) {
                        failures.add(e);
                    }
                }
            });
            workers.add(worker);
            worker.start();
        }
        for (Thread worker : workers) worker.join();
        if (write) file.flush();
        double seconds = (System.nanoTime() - start) / 1e9;
        if (!failures.isEmpty()) throw new IllegalStateException("a worker failed", failures.get(0));
        return stretch * threads / seconds / 1e6;
    }
}

package io.pagewise.jmh;

import io.pagewise.CacheMode;
import io.pagewise.PageCache;
import io.pagewise.StorageFile;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Sequential writers through {@link StorageFile}, each in a file of its own (or a region of its own in one shared
 * file), timing every request. Prints one RESULT line: the mode in effect, per-request latency (p50, p99, max),
 * the write phase's rate, the rate until everything is durable (writes, then flush and close), the most that was
 * cached while writing and what is cached after close (the library's residency, cachestat or mincore). Run by
 * {@code jmh/dontcache-writes.sh}, which checks the residency with vmtouch as well.
 *
 * <pre>
 * HeavyWrites DIR MODE WRITERS REQUEST_BYTES TOTAL_BYTES files|regions
 * </pre>
 *
 * The files are DIR/w0.. (files) or DIR/shared (regions); they are deleted first and left for the script to check.
 */
public final class HeavyWrites {
    private HeavyWrites() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 6) {
            System.err.println("usage: HeavyWrites DIR MODE WRITERS REQUEST_BYTES TOTAL_BYTES files|regions");
            System.exit(2);
        }
        Path dir = Path.of(args[0]);
        CacheMode mode = CacheMode.valueOf(args[1].toUpperCase(Locale.ROOT));
        int writers = Integer.parseInt(args[2]);
        int request = Integer.parseInt(args[3]);
        long total = Long.parseLong(args[4]);
        boolean shared = args[5].equals("regions");
        long perWriter = total / writers / request * request;
        int requests = (int) (perWriter / request);

        List<Path> paths = new ArrayList<>();
        if (shared) paths.add(dir.resolve("shared"));
        else for (int i = 0; i < writers; i++) paths.add(dir.resolve("w" + i));
        for (Path p : paths) Files.deleteIfExists(p);
        List<StorageFile> files = new ArrayList<>();
        for (Path p : paths) {
            files.add(StorageFile.open(p, mode, StandardOpenOption.CREATE, StandardOpenOption.READ,
                    StandardOpenOption.WRITE));
        }

        long[][] latencies = new long[writers][requests];
        Throwable[] failures = new Throwable[writers];
        Thread[] threads = new Thread[writers];
        AtomicBoolean writing = new AtomicBoolean(true);
        long[] peakCached = new long[1];
        Thread sampler = new Thread(() -> {
            while (writing.get()) {
                try {
                    long cached = 0;
                    for (Path p : paths) cached += PageCache.residency(p).residentBytes();
                    peakCached[0] = Math.max(peakCached[0], cached);
                    Thread.sleep(100);
                } catch (IOException | InterruptedException e) {
                    return;
                }
            }
        }, "residency-sampler");
        sampler.setDaemon(true);

        long start = System.nanoTime();
        for (int w = 0; w < writers; w++) {
            int writer = w;
            StorageFile file = files.get(shared ? 0 : w);
            long base = shared ? w * perWriter : 0;
            threads[w] = new Thread(() -> {
                ByteBuffer buffer = ByteBuffer.allocateDirect(request + 4096).alignedSlice(4096).limit(request).slice();
                byte[] random = new byte[request];
                ThreadLocalRandom.current().nextBytes(random);
                buffer.put(random).flip();
                try {
                    for (int i = 0; i < requests; i++) {
                        buffer.clear();
                        long t0 = System.nanoTime();
                        file.write(buffer, base + (long) i * request);
                        latencies[writer][i] = System.nanoTime() - t0;
                    }
                } catch (Throwable e) {
                    failures[writer] = e;
                }
            }, "writer-" + w);
        }
        for (Thread t : threads) t.start();
        sampler.start();
        for (Thread t : threads) t.join();
        long written = System.nanoTime();
        writing.set(false);
        sampler.join();
        for (Throwable failure : failures) {
            if (failure != null) throw new IOException("a writer failed", failure);
        }
        String inEffect = files.get(0).cacheMode().name();
        for (StorageFile file : files) file.flush();
        for (StorageFile file : files) file.close();
        long durable = System.nanoTime();

        long cachedAfter = 0;
        long size = 0;
        for (Path p : paths) {
            cachedAfter += PageCache.residency(p).residentBytes();
            size += Files.size(p);
        }
        long[] all = new long[writers * requests];
        for (int w = 0; w < writers; w++) System.arraycopy(latencies[w], 0, all, w * requests, requests);
        Arrays.sort(all);
        long bytes = (long) writers * requests * request;
        System.out.printf(Locale.ROOT,
                "RESULT mode=%s in_effect=%s writers=%d request=%d bytes=%d p50_ms=%.3f p99_ms=%.3f max_ms=%.3f"
                        + " write_MBps=%.0f durable_MBps=%.0f peak_cached_MiB=%.0f cached_after_pct=%.3f%n",
                mode, inEffect, writers, request, bytes, Percentiles.millis(all, 0.50), Percentiles.millis(all, 0.99),
                millis(all[all.length - 1]), bytes / ((written - start) / 1e9) / 1e6,
                bytes / ((durable - start) / 1e9) / 1e6, peakCached[0] / 1048576.0,
                size == 0 ? 0 : 100.0 * cachedAfter / size);
    }

    private static double millis(long nanos) {
        return nanos / 1e6;
    }
}

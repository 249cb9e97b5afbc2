package io.pagewise.filters;

import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.backends.MemoryDevice;
import io.pagewise.device.BlockDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Lower bounds on how long transfers take through the limits: N bytes at R bytes/s with a bucket of B bytes take at
 * least (N - B) / R seconds. Upper bounds would be speed claims, so none is asserted.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RateFilterTest {
    private static final int KIB = 1024;

    /** Reads n bytes in 16 KiB calls; returns the seconds it took. */
    private static double read(BlockDevice device, int n) throws IOException {
        long start = System.nanoTime();
        for (int at = 0; at < n; at += 16 * KIB) device.readFully(ByteBuffer.allocate(16 * KIB), at % (1 << 20));
        return (System.nanoTime() - start) / 1e9;
    }

    @Test
    void theTotalRateBoundsReadsAndWrites() throws IOException {
        RateFilter limited = new RateFilter(new MemoryDevice(1 << 20), 512 * KIB, 0, 0.25);
        double seconds = read(limited, 768 * KIB);
        // 768 KiB at 512 KiB/s with 128 KiB in the bucket: at least 1.25 s.
        assertTrue(seconds >= 1.25 - 0.02, "768 KiB read in " + seconds + " s");
        long start = System.nanoTime();
        limited.write(ByteBuffer.allocate(512 * KIB), 0, false); // one call larger than the bucket: it waits its debt
        limited.write(ByteBuffer.allocate(16 * KIB), 0, false);
        double writeSeconds = (System.nanoTime() - start) / 1e9;
        assertTrue(writeSeconds >= 1.0 - 0.02, "528 KiB written with an empty bucket in " + writeSeconds + " s");
    }

    @Test
    void eachConnectionHasItsOwnLimitAndAllShareTheTotal() throws Exception {
        RateFilter perConnection = new RateFilter(new MemoryDevice(1 << 20), 0, 256 * KIB, 0.25);
        BlockDevice first = perConnection.forConnection();
        BlockDevice second = perConnection.forConnection();
        assertNotSame(first, second, "each connection gets a view with a bucket of its own");
        // Each connection: 384 KiB at 256 KiB/s with 64 KiB in its bucket, at least 1.25 s, whatever the other does.
        for (double seconds : inParallel(first, second, 384 * KIB)) {
            assertTrue(seconds >= 1.25 - 0.02, "a connection read 384 KiB in " + seconds + " s");
        }

        RateFilter total = new RateFilter(new MemoryDevice(1 << 20), 512 * KIB, 0, 0.25);
        assertSame(total, total.forConnection(), "without a per-connection limit there is nothing to keep apart");
        long start = System.nanoTime();
        inParallel(total.forConnection(), total.forConnection(), 384 * KIB);
        double both = (System.nanoTime() - start) / 1e9;
        // 768 KiB together at 512 KiB/s with 128 KiB in the shared bucket: at least 1.25 s.
        assertTrue(both >= 1.25 - 0.02, "two connections read 768 KiB in " + both + " s");
    }

    private static List<Double> inParallel(BlockDevice a, BlockDevice b, int n) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            List<Future<Double>> runs = new ArrayList<>();
            for (BlockDevice d : List.of(a, b)) runs.add(pool.submit(() -> read(d, n)));
            List<Double> seconds = new ArrayList<>();
            for (Future<Double> f : runs) seconds.add(f.get(30, TimeUnit.SECONDS));
            return seconds;
        } finally {
            pool.shutdownNow();
        }
    }
}

package io.pagewise.filters;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.backends.MemoryDevice;
import io.pagewise.device.BlockDevice;
import io.pagewise.device.DeviceException;
import io.pagewise.device.ZeroFlag;
import io.pagewise.filters.FaultFilter.Operation;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The counts, bytes, errors and latency of each operation, on demand, at close and every interval. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class StatsFilterTest {
    @TempDir
    Path dir;

    @Test
    void countsEachOperationWithItsBytesErrorsAndLatency() throws IOException {
        FaultFilter slowAndFailing = FaultFilter.wrap(new MemoryDevice(1 << 20))
                .fail(Operation.TRIM, 1.0, DeviceException.EIO)
                .delay(Operation.FLUSH, Duration.ofMillis(30), Duration.ofMillis(30)).build();
        Path file = dir.resolve("stats.txt");
        StatsFilter stats = new StatsFilter(slowAndFailing, file, false, Duration.ZERO);
        stats.readFully(ByteBuffer.allocate(4096), 0);
        stats.readFully(new ByteBuffer[] {ByteBuffer.allocate(100), ByteBuffer.allocate(200)}, 8192);
        stats.write(ByteBuffer.allocate(1000), 0, true);
        stats.zero(0, 65536, ZeroFlag.NONE);
        assertThrows(DeviceException.class, () -> stats.trim(0, 4096, false));
        stats.flush();
        BlockDevice view = stats.forConnection();
        view.readFully(ByteBuffer.allocate(10), 0); // a per-connection view counts into the same totals

        Map<Operation, StatsFilter.Counts> counts = stats.snapshot();
        assertEquals(new StatsFilter.Counts(3, 4096 + 300 + 10, 0, counts.get(Operation.READ).totalLatency(),
                counts.get(Operation.READ).maxLatency()), counts.get(Operation.READ));
        assertEquals(1, counts.get(Operation.WRITE).calls());
        assertEquals(1000, counts.get(Operation.WRITE).bytes());
        assertEquals(65536, counts.get(Operation.ZERO).bytes());
        assertEquals(1, counts.get(Operation.TRIM).errors(), "a failed call counts as an error");
        assertTrue(counts.get(Operation.FLUSH).maxLatency().toMillis() >= 29,
                "the flush's latency includes the delay below: " + counts.get(Operation.FLUSH));
        assertEquals(0, counts.get(Operation.CACHE).calls());

        assertTrue(Files.notExists(file), "nothing is written before close without an interval");
        stats.close();
        String report = Files.readString(file);
        assertTrue(report.startsWith("elapsed "), report);
        assertTrue(report.contains("\nread: calls=3 bytes=4406 errors=0 mean="), report);
        assertTrue(report.contains("\ntrim: calls=1 bytes=4096 errors=1 "), report);
        assertTrue(!report.contains("cache:"), "operations never called are left out: " + report);
    }

    @Test
    void anIntervalWritesWhileOpenAndAppendKeepsEveryReport() throws Exception {
        Path file = dir.resolve("periodic.txt");
        try (StatsFilter stats = new StatsFilter(new MemoryDevice(4096), file, true, Duration.ofMillis(50))) {
            stats.write(ByteBuffer.allocate(10), 0, false);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (!(Files.exists(file) && Files.readString(file).split("elapsed").length > 2)) {
                assertTrue(System.nanoTime() < deadline, "no two periodic reports within 20 s");
                Thread.sleep(20);
            }
        }
        String all = Files.readString(file);
        assertTrue(all.split("elapsed").length >= 4, "two periodic reports and the one at close: " + all);
        assertTrue(all.contains("write: calls=1 bytes=10 errors=0"), all);
    }
}

package io.pagewise.backends;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.CacheMode;
import io.pagewise.Native;
import io.pagewise.PageCache;
import io.pagewise.device.Capability;
import io.pagewise.device.ZeroFlag;
import io.pagewise.testing.ExternalTools;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * READ looks for holes only while the file may have some: fully written files skip the lookups. CACHE is advertised
 * only in the modes where it reads into the page cache.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class FileDeviceTest {
    @TempDir
    Path dir;

    @Test
    void fullyWrittenFileHasNoHolesUntilTrimmedOrZeroed() throws IOException {
        Path path = dir.resolve("full.raw");
        Files.write(path, new byte[1 << 20]);
        try (FileDevice export = FileDevice.open(path, CacheMode.WRITEBACK, java.nio.file.StandardOpenOption.READ, java.nio.file.StandardOpenOption.WRITE)) {
            assertFalse(export.capabilities().has(Capability.HOLES), "a fully written file has no holes");
            export.trim(0, 65536, false);
            assertTrue(export.capabilities().has(Capability.HOLES), "TRIM may punch a hole");
        }
        try (FileDevice export = FileDevice.open(path, CacheMode.WRITEBACK, java.nio.file.StandardOpenOption.READ, java.nio.file.StandardOpenOption.WRITE)) {
            assertTrue(export.capabilities().has(Capability.HOLES), "the punched hole is found at open");
        }
        Path other = dir.resolve("zeroed.raw");
        Files.write(other, new byte[1 << 20]);
        try (FileDevice export = FileDevice.open(other, CacheMode.WRITEBACK, java.nio.file.StandardOpenOption.READ, java.nio.file.StandardOpenOption.WRITE)) {
            export.zero(0, 65536, ZeroFlag.of(true, false, false));
            assertTrue(export.capabilities().has(Capability.HOLES), "zeroing may punch a hole");
        }
    }

    @ParameterizedTest
    @EnumSource(CacheMode.class)
    void cacheIsAdvertisedExactlyWhereItFillsThePageCache(CacheMode mode) throws Exception {
        if (!Native.isAvailable()) ExternalTools.unavailable("native library not loaded", "residency is read with mincore");
        Path path = dir.resolve("cache.raw");
        byte[] data = new byte[8 << 20];
        new java.util.Random(4).nextBytes(data);
        Files.write(path, data);
        PageCache.evict(path);
        try (FileDevice export = FileDevice.open(path, mode, java.nio.file.StandardOpenOption.READ)) {
            // the server sends SEND_CACHE exactly when this says yes
            boolean advertised = export.capabilities().has(Capability.CACHE);
            assertEquals(export.file().cacheMode().prefetches(), advertised, "SEND_CACHE for " + export.file().cacheMode());
            long before = PageCache.residency(path).residentPages();
            export.cache(0, 4 << 20); // what NBD_CMD_CACHE runs
            // WILLNEED starts readahead; its pages arrive shortly after.
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(advertised ? 5000 : 300);
            long after = before;
            while (System.nanoTime() < deadline && (after = PageCache.residency(path).residentPages()) == before) {
                Thread.sleep(10);
            }
            assertEquals(advertised, after > before, mode + ": " + before + " then " + after + " pages resident after CACHE");
        }
    }

    @Test
    void sparseFileMayHaveHoles() throws IOException {
        Path path = dir.resolve("sparse.raw");
        try (RandomAccessFile raf = new RandomAccessFile(path.toFile(), "rw")) {
            raf.setLength(64L << 20);
            raf.seek(32L << 20);
            raf.write(1);
        }
        try (FileDevice export = FileDevice.open(path, CacheMode.WRITEBACK, java.nio.file.StandardOpenOption.READ)) {
            assertTrue(export.capabilities().has(Capability.HOLES));
        }
    }
}

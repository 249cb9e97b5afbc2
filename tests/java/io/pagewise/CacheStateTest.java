package io.pagewise;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.testing.ExternalTools;
import java.io.RandomAccessFile;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** PageCache.cacheState: cachestat's cached, dirty and writeback counts follow a file written, synced and evicted. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class CacheStateTest {
    private static final int SIZE = 8 << 20;

    @TempDir
    Path dir;

    @Test
    void writtenThenSyncedThenEvicted() throws Exception {
        ExternalTools.requireNativeLibrary();
        Path file = dir.resolve("f");
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
            raf.write(new byte[SIZE]);
            Optional<CacheState> written = PageCache.cacheState(file);
            if (written.isEmpty()) {
                ExternalTools.unavailable("this kernel has no cachestat (Linux 6.5+): " + System.getProperty("os.version"),
                        "the metrics report cachestat's counts");
            }
            int pages = SIZE / written.get().pageSize();
            assertEquals(pages, written.get().cached(), "every page just written is cached: " + written.get());
            assertTrue(written.get().dirty() + written.get().writeback() > 0, "not yet written back: " + written.get());
            raf.getFD().sync();
        }
        CacheState synced = PageCache.cacheState(file).orElseThrow();
        assertEquals(0, synced.dirty() + synced.writeback(), "after fsync: " + synced);
        PageCache.evict(file);
        CacheState evicted = PageCache.cacheState(file).orElseThrow();
        assertEquals(0, evicted.cached(), "after eviction: " + evicted);
        // evicted and recentlyEvicted count pages the kernel reclaimed under memory pressure (shadow entries);
        // POSIX_FADV_DONTNEED drops pages without leaving any, so this test cannot make them grow.
    }
}

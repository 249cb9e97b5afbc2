package io.pagewise.policy;

import static io.pagewise.testing.TestData.random;
import static java.nio.file.StandardOpenOption.READ;
import static java.nio.file.StandardOpenOption.WRITE;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.CacheMode;
import io.pagewise.PageCache;
import io.pagewise.StorageFile;
import io.pagewise.internal.Advice;
import io.pagewise.internal.BufferPool;
import io.pagewise.internal.NativeRawFile;
import io.pagewise.internal.RawFile;
import io.pagewise.testing.ExternalTools;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * EVICT's large page-aligned writes go to the disk by O_DIRECT ({@link LargeDirectWrites}): none of their pages is
 * cached even right after the write, when a buffered write's pages would still be in the tracker's active windows.
 * Everything else stays buffered, and pages cached before the file was opened stay cached.
 */
@Timeout(value = 1, unit = TimeUnit.MINUTES)
class LargeDirectWritesTest {
    private static final int MIB = 1 << 20;
    private static final int SIZE = 8 * MIB;

    @TempDir
    Path dir;
    private Path path;
    private byte[] old;

    @BeforeEach
    void durableUncachedFile() throws IOException {
        ExternalTools.requireNativeLibrary();
        path = dir.resolve("data.raw");
        old = random(1, SIZE);
        Files.write(path, old);
        try (RawFile raw = NativeRawFile.open(path, 0)) {
            raw.dataSync();
            raw.advise(0, 0, Advice.DONTNEED);
        }
        assertEquals(0, cachedPages(), "the file should start uncached");
    }

    @ParameterizedTest
    @EnumSource(value = CacheMode.class, names = {"EVICT", "DONTCACHE"})
    void largeAlignedWritesAreNeverCached(CacheMode mode) throws IOException {
        byte[] fresh = random(2, MIB);
        try (StorageFile file = StorageFile.open(path, mode, READ, WRITE)) {
            // DONTCACHE's probe at open reads the first page, and readahead may stay around it: look from 1 MiB on.
            file.write(aligned(fresh), MIB, false);
            assertEquals(0, cachedPages(MIB), mode + ": a 1 MiB page-aligned write left pages cached");
            file.write(aligned(fresh), 3 * MIB, true);
            assertEquals(0, cachedPages(MIB), mode + ": a 1 MiB page-aligned FUA write left pages cached");
        }
        byte[] expected = old.clone();
        System.arraycopy(fresh, 0, expected, MIB, MIB);
        System.arraycopy(fresh, 0, expected, 3 * MIB, MIB);
        assertArrayEquals(expected, Files.readAllBytes(path));
    }

    @Test
    void smallUnalignedAndHeapWritesStayBuffered() throws IOException {
        int small = LargeDirectWrites.MIN_LENGTH / 2;
        try (StorageFile file = StorageFile.open(path, CacheMode.EVICT, READ, WRITE)) {
            file.write(aligned(random(3, small)), 0, false);
            assertTrue(cachedPages() > 0, "a write under " + LargeDirectWrites.MIN_LENGTH + " bytes is buffered");
            evict();
            file.write(aligned(random(4, MIB)).position(512), 2 * MIB, false);
            assertTrue(cachedPages() > 0, "a write of part pages is buffered");
            evict();
            file.write(ByteBuffer.wrap(random(5, MIB)), 4 * MIB, false);
            assertTrue(cachedPages() > 0, "a write from a heap buffer is buffered");
        }
    }

    @Test
    void pagesCachedBeforeOpenStayCached() throws IOException {
        try (FileChannel channel = FileChannel.open(path, READ)) {
            channel.read(ByteBuffer.allocate(MIB), 0); // someone else's pages
        }
        long before = PageCache.residency(path, 0, MIB).residentPages();
        assertTrue(before > 0, "the first MiB should be cached by the read");
        byte[] fresh = random(6, MIB);
        try (StorageFile file = StorageFile.open(path, CacheMode.EVICT, READ, WRITE)) {
            file.write(aligned(fresh), 0, false);
        }
        // O_DIRECT drops every page of the range; this machine's DAMON reclaim may take a few on its own.
        long after = PageCache.residency(path, 0, MIB).residentPages();
        assertTrue(after >= before / 2, "pages cached before the open: " + before + ", after the write " + after
                + " (O_DIRECT would have dropped them all)");
        byte[] expected = old.clone();
        System.arraycopy(fresh, 0, expected, 0, MIB);
        assertArrayEquals(expected, Files.readAllBytes(path));
    }

    private void evict() throws IOException {
        try (RawFile raw = NativeRawFile.open(path, 0)) {
            raw.dataSync();
            raw.advise(0, 0, Advice.DONTNEED);
        }
    }

    private long cachedPages() throws IOException {
        return PageCache.residency(path).residentPages();
    }

    private long cachedPages(long from) throws IOException {
        return PageCache.residency(path, from, SIZE - from).residentPages();
    }

    private static ByteBuffer aligned(byte[] data) {
        ByteBuffer buffer = BufferPool.aligned(data.length + 4096);
        buffer.put(data).flip();
        return buffer;
    }

}

package io.pagewise;

import static java.nio.file.StandardOpenOption.READ;
import static java.nio.file.StandardOpenOption.WRITE;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.testing.ExternalTools;
import io.pagewise.testing.LoopMounts;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/** PageCache on small files: touch makes a file fully resident, evict drops it all, and ranges count right. */
@Timeout(60)
class PageCacheResidencyTest {
    private static final int SIZE = 8 << 20;

    @RegisterExtension
    static final LoopMounts MOUNTS = new LoopMounts();

    @TempDir
    Path dir;

    @Test
    void touchMakesAFileFullyResidentAndEvictDropsIt() throws Exception {
        Path path = dir.resolve("eight-mib");
        byte[] content = Fixtures.random(1, SIZE);
        Files.write(path, content);
        int page = PageCache.pageSize();
        assertTrue(page >= 4096 && Integer.bitCount(page) == 1, "page size " + page);
        long pages = SIZE / page;

        PageCache.evict(path);
        Residency evicted = PageCache.residency(path);
        assertEquals(new Residency(0, pages, page), evicted, "after evict");
        assertEquals(0.0, evicted.percent());

        PageCache.touch(path);
        Residency touched = PageCache.residency(path);
        assertEquals(new Residency(pages, pages, page), touched, "after touch");
        assertEquals(100.0, touched.percent());
        assertEquals(SIZE, touched.residentBytes());

        PageCache.evict(path);
        assertEquals(0, PageCache.residency(path).residentPages(), "after the second evict");
        assertArrayEquals(content, Files.readAllBytes(path), "eviction never changes data");
    }

    /**
     * prefetch (and so NBD CACHE) reads all of a range: the kernel reads at most its readahead size (8 MiB here)
     * per WILLNEED, which left 12.5 % of a 64 MiB prefetch cached before prefetch advised it piece by piece.
     */
    @Test
    void prefetchReadsTheWholeRangeNotOneReadaheadWindow() throws Exception {
        Path path = dir.resolve("prefetch");
        long size = 64 << 20;
        try (FileChannel fill = FileChannel.open(path, java.nio.file.StandardOpenOption.CREATE_NEW, WRITE)) {
            ByteBuffer chunk = ByteBuffer.wrap(Fixtures.random(5, 1 << 20));
            for (long at = 0; at < size; at += chunk.capacity()) fill.write(chunk.clear(), at);
            fill.force(false);
        }
        PageCache.evict(path);
        assertEquals(0, PageCache.residency(path).residentPages(), "cold before the prefetch");
        try (StorageFile file = StorageFile.open(path, CacheMode.WRITEBACK, READ)) {
            file.prefetch(0, size);
            long deadline = System.nanoTime() + 20_000_000_000L;
            double percent = 0;
            while (System.nanoTime() < deadline && (percent = file.residency(0, size).percent()) < 99) Thread.sleep(50);
            assertTrue(percent >= 99, "after prefetch(0, 64 MiB): " + percent + " % cached");
        } finally {
            PageCache.evict(path);
        }
    }

    /** A length of 0 is an empty range everywhere: evict(offset, 0) drops nothing; evict() drops the whole file. */
    @Test
    void aZeroLengthIsAnEmptyRangeAndEvictDropsTheWholeFile() throws Exception {
        Path path = dir.resolve("empty-range");
        Files.write(path, Fixtures.random(6, SIZE));
        PageCache.touch(path);
        long pages = SIZE / PageCache.pageSize();
        try (StorageFile file = StorageFile.open(path, CacheMode.WRITEBACK, READ, WRITE)) {
            file.evict(0, 0);
            file.advise(0, 0, AccessHint.DONTNEED);
            assertEquals(pages, file.residency(0, SIZE).residentPages(), "evict(0, 0) and advise(0, 0) drop nothing");
            assertEquals(SIZE, file.write(ByteBuffer.allocateDirect(SIZE), 0), "write returns what it wrote");
            file.evict();
            assertEquals(0, file.residency(0, SIZE).residentPages(), "evict() drops the whole file");
        }
    }

    @ParameterizedTest
    @EnumSource(CacheMode.class)
    void openingAndClosingAColdFileLeavesItCold(CacheMode mode) throws Exception {
        openAndCloseCold(dir.resolve("cold"), mode, "");
    }

    static Stream<Arguments> fileSystemsAndModes() {
        List<Arguments> cases = new ArrayList<>();
        for (String type : LoopMounts.TYPES) {
            for (CacheMode mode : CacheMode.values()) cases.add(Arguments.of(type, mode));
        }
        return cases.stream();
    }

    /** DONTCACHE's probe read at open, on each file system (which may or may not take RWF_DONTCACHE). */
    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("fileSystemsAndModes")
    void openingAndClosingAColdFileLeavesItColdOnEachFileSystem(String type, CacheMode mode) throws Exception {
        openAndCloseCold(MOUNTS.directory(type).resolve("cold"), mode, type + " ");
    }

    private static void openAndCloseCold(Path path, CacheMode mode, String where) throws Exception {
        Files.write(path, Fixtures.random(3, SIZE));
        PageCache.evict(path);
        // DONTCACHE reads a byte at open to learn whether the file takes RWF_DONTCACHE.
        StorageFile.open(path, mode, READ).close();
        assertEquals(0, PageCache.residency(path).residentPages(), where + mode + " left pages cached");
        ExternalTools.require("vmtouch");
        String vmtouch = ExternalTools.run(30, "vmtouch", path.toString()).assertOk("vmtouch").stdout();
        assertTrue(vmtouch.contains("Resident Pages: 0/"), vmtouch);
    }

    @Test
    void evictWritesDirtyPagesBackBeforeDroppingThem() throws Exception {
        Path path = dir.resolve("dirty");
        Files.write(path, new byte[SIZE]);
        byte[] fresh = Fixtures.random(2, 3 << 20);
        try (FileChannel channel = FileChannel.open(path, WRITE)) {
            channel.write(ByteBuffer.wrap(fresh), 1 << 20); // dirty in the page cache, not synced
        }
        PageCache.evict(path);
        assertEquals(0, PageCache.residency(path).residentPages(), "dirty pages are dropped too, once written");
        byte[] expected = new byte[SIZE];
        System.arraycopy(fresh, 0, expected, 1 << 20, fresh.length);
        assertArrayEquals(expected, Files.readAllBytes(path), "the dirty data reached the file");
    }

    @Test
    void rangesAreCountedInWholePagesAndClippedToTheFile() throws Exception {
        Path path = dir.resolve("ranges");
        Files.write(path, Fixtures.random(3, SIZE + 100)); // a partial last page
        int page = PageCache.pageSize();
        PageCache.touch(path);
        assertEquals(new Residency(SIZE / page + 1, SIZE / page + 1, page), PageCache.residency(path));
        assertEquals(new Residency(3, 3, page), PageCache.residency(path, page + 1, 2L * page),
                "[page+1, 3*page+1) touches pages 1, 2 and 3");
        assertEquals(new Residency(2, 2, page), PageCache.residency(path, SIZE - 1, 1 << 20),
                "clipped to the end of file: the page of byte SIZE-1 and the partial last page");
        assertEquals(new Residency(1, 1, page), PageCache.residency(path, SIZE, 1 << 20), "the partial last page");
        assertEquals(0, PageCache.residency(path, SIZE + 100, page).totalPages(), "at the end of file");
        assertEquals(0, PageCache.residency(path, 1L << 40, page).totalPages(), "past the end of file");
        assertEquals(0, PageCache.residency(path, 5, 0).totalPages(), "an empty range");

        PageCache.evict(path);
        try (StorageFile file = StorageFile.open(path, CacheMode.WRITEBACK, READ)) {
            file.read(ByteBuffer.allocate(2 * page), 4L * page); // read two pages; readahead may add more
            Residency some = file.residency(0, SIZE + 100);
            assertTrue(some.residentPages() >= 2 && some.residentPages() < some.totalPages(), some.toString());
            assertEquals(new Residency(2, 2, page), file.residency(4L * page, 2L * page), "the pages just read");
            assertEquals(PageCache.residency(path), file.residency(0, Long.MAX_VALUE));
        }
    }

    @Test
    void anEmptyFileHasNoPages() throws Exception {
        Path path = dir.resolve("empty");
        Files.createFile(path);
        PageCache.touch(path);
        PageCache.evict(path);
        Residency r = PageCache.residency(path);
        assertEquals(0, r.totalPages());
        assertEquals(0.0, r.percent());
    }
}

package io.pagewise;

import static io.pagewise.Fixtures.assertBytes;
import static java.nio.file.StandardOpenOption.CREATE_NEW;
import static java.nio.file.StandardOpenOption.READ;
import static java.nio.file.StandardOpenOption.WRITE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.Fixtures.BufferKind;
import io.pagewise.Fixtures.Model;
import io.pagewise.system.Alignment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Space management: extents of sparse files, zero (with and without trimming), trim, resize, plus the counters,
 * hints and alignment a file reports.
 */
@Timeout(60)
class ExtentsAndZeroTest {
    private static final int K = 1024;
    private static final int M = 1024 * 1024;
    private static final long SIZE = 16L * M;

    @TempDir
    Path dir;

    private static Extent data(long start, long end) {
        return new Extent(start, end - start, false);
    }

    private static Extent hole(long start, long end) {
        return new Extent(start, end - start, true);
    }

    @ParameterizedTest
    @EnumSource(CacheMode.class)
    void extentsOfASparseFileMatchTheDataWritten(CacheMode mode) throws Exception {
        Path path = dir.resolve("sparse");
        try (StorageFile file = StorageFile.open(path, mode, CREATE_NEW, READ, WRITE)) {
            file.resize(SIZE);
            assertEquals(List.of(hole(0, SIZE)), file.extents(0, SIZE), "a resized empty file is one hole");
            Fixtures.write(file, 0, Fixtures.random(1, 64 * K), BufferKind.DIRECT);
            Fixtures.write(file, 4 * M, Fixtures.random(2, 128 * K), BufferKind.HEAP);
            Fixtures.write(file, 10 * M, Fixtures.random(3, 64 * K), BufferKind.DIRECT);
            Fixtures.write(file, SIZE - 64 * K, Fixtures.random(4, 64 * K), BufferKind.HEAP);
            List<Extent> expected = List.of(
                    data(0, 64 * K), hole(64 * K, 4 * M),
                    data(4 * M, 4 * M + 128 * K), hole(4 * M + 128 * K, 10 * M),
                    data(10 * M, 10 * M + 64 * K), hole(10 * M + 64 * K, SIZE - 64 * K),
                    data(SIZE - 64 * K, SIZE));
            assertEquals(expected, file.extents(0, SIZE), "before writeback");
            assertEquals(expected, file.extents(0, Long.MAX_VALUE), "a range past the end is clipped");
            file.flush();
            assertEquals(expected, file.extents(0, SIZE), "after writeback");
            assertEquals(List.of(data(32 * K, 64 * K), hole(64 * K, 4 * M), data(4 * M, 4 * M + 32 * K)),
                    file.extents(32 * K, 4 * M), "a range starting and ending inside data runs");
            assertEquals(List.of(hole(15 * M, SIZE - 64 * K), data(SIZE - 64 * K, SIZE)),
                    file.extents(15 * M, 10 * M), "a range across the end of file");
            assertEquals(List.of(hole(5 * M, 6 * M)), file.extents(5 * M, M), "inside a hole");
            assertEquals(List.of(), file.extents(SIZE, 100), "at the end of file");
            assertEquals(List.of(), file.extents(SIZE + 5, 100), "past the end of file");
            assertEquals(List.of(), file.extents(0, 0), "empty range");
        }
    }

    @ParameterizedTest
    @EnumSource(CacheMode.class)
    void allocateGrowsTheFileWithZerosAndKeepsItsData(CacheMode mode) throws Exception {
        Path path = dir.resolve("allocate");
        byte[] data = Fixtures.random(6, M);
        Files.write(path, data);
        try (StorageFile file = StorageFile.open(path, mode, READ, WRITE)) {
            assertTrue(file.allocate(M / 2, 2 * M), "fallocate on " + Files.getFileStore(path).type());
            assertEquals(M / 2 + 2 * M, file.size(), "the size covers the allocated range");
            assertBytes(data, Fixtures.read(file, 0, M, BufferKind.DIRECT), "the data before and inside the range");
            assertBytes(new byte[M + M / 2], Fixtures.read(file, M, M + M / 2, BufferKind.HEAP), "new space reads zeros");
            byte[] more = Fixtures.random(7, 256 * K);
            Fixtures.write(file, M, more, BufferKind.DIRECT);
            assertTrue(file.allocate(0, 64 * K), "a range inside the file");
            assertEquals(M / 2 + 2 * M, file.size(), "a range inside the file leaves the size");
            file.resize(M + 256 * K);
            assertBytes(more, Fixtures.read(file, M, 256 * K, BufferKind.HEAP), "what was written into the space");
            assertEquals(M + 256 * K, Files.size(path));
            assertEquals(false, file.allocate(M, 0), "an empty range");
        }
    }

    @ParameterizedTest
    @EnumSource(CacheMode.class)
    void zeroReadsZerosAndWithTrimLeavesAHole(CacheMode mode) throws Exception {
        Path path = dir.resolve("zero");
        Model model = new Model();
        model.write(0, Fixtures.random(5, 4 * M));
        Files.write(path, model.bytes());
        try (StorageFile file = StorageFile.open(path, mode, READ, WRITE)) {
            file.zero(M, M, true);
            model.zero(M, M, false);
            assertEquals(4 * M, file.size(), "zero inside the file keeps the size");
            assertBytes(model.bytes(), Fixtures.read(file, 0, 4 * M, BufferKind.DIRECT), "after zero(mayTrim)");
            assertEquals(List.of(data(0, M), hole(M, 2 * M), data(2 * M, 4 * M)), file.extents(0, 4 * M),
                    "zero with mayTrim punches a hole");

            file.zero(3 * M, 256 * K, false);
            model.zero(3 * M, 256 * K, false);
            assertBytes(model.bytes(), Fixtures.read(file, 0, 4 * M, BufferKind.HEAP), "after zero(!mayTrim)");

            // Unaligned edges: the partial blocks keep their other bytes.
            file.zero(1000, 5000, true);
            model.zero(1000, 5000, false);
            file.zero(2 * M + 4095, 3, false);
            model.zero(2 * M + 4095, 3, false);
            assertBytes(model.bytes(), Fixtures.read(file, 0, 4 * M, BufferKind.DIRECT_UNALIGNED), "unaligned zeros");

            // Zeroing across the end of file grows the file to the end of the range, with and without mayTrim.
            file.zero(4 * M - 100, 10_000, true);
            model.zero(4 * M - 100, 10_000, true);
            assertEquals(model.size(), file.size(), "zero(mayTrim) across the end of file");
            file.zero(model.size() + 5000, 3000, false);
            model.zero(model.size() + 5000, 3000, true);
            assertEquals(model.size(), file.size(), "zero past the end of file");
            assertBytes(model.bytes(), Fixtures.read(file, 0, model.size() + 1, BufferKind.HEAP), "after growing zeros");
            file.zero(10, 0, true); // empty: nothing
        }
        assertBytes(model.bytes(), Files.readAllBytes(path), "via Files.readAllBytes");
    }

    @ParameterizedTest
    @EnumSource(CacheMode.class)
    void trimReadsZerosAndNeverGrowsTheFile(CacheMode mode) throws Exception {
        Path path = dir.resolve("trim");
        Model model = new Model();
        model.write(0, Fixtures.random(6, 2 * M + 777));
        Files.write(path, model.bytes());
        try (StorageFile file = StorageFile.open(path, mode, READ, WRITE)) {
            file.trim(256 * K, 512 * K);
            model.zero(256 * K, 512 * K, false);
            file.trim(12_345, 6789);
            model.zero(12_345, 6789, false);
            assertBytes(model.bytes(), Fixtures.read(file, 0, model.size(), BufferKind.DIRECT), "after trims");
            file.trim(2 * M, M); // across the end: trims up to it, never grows
            model.zero(2 * M, M, false);
            file.trim(5 * M, M); // entirely past the end: nothing
            assertEquals(model.size(), file.size(), "trim never changes the size");
            assertBytes(model.bytes(), Fixtures.read(file, 0, model.size() + 10, BufferKind.HEAP), "after trim at end");
            assertTrue(file.extents(0, model.size()).contains(hole(256 * K, 768 * K)), file.extents(0, model.size()).toString());
        }
        assertBytes(model.bytes(), Files.readAllBytes(path), "via Files.readAllBytes");
    }

    @ParameterizedTest
    @EnumSource(CacheMode.class)
    void resizeGrowsSparselyAndShrinks(CacheMode mode) throws Exception {
        Path path = dir.resolve("resize");
        Model model = new Model();
        try (StorageFile file = StorageFile.open(path, mode, CREATE_NEW, READ, WRITE)) {
            byte[] data = Fixtures.random(7, 100 * K + 3);
            Fixtures.write(file, 0, data, BufferKind.HEAP);
            model.write(0, data);
            file.resize(8 * M + 1);
            model.resize(8 * M + 1);
            assertEquals(8 * M + 1, file.size());
            assertEquals(8 * M + 1, Files.size(path));
            // Data up to the end of the block holding the last byte written, then one hole to the new end.
            List<Extent> extents = file.extents(0, 8 * M + 1);
            assertEquals(2, extents.size(), extents.toString());
            long dataEnd = extents.get(0).end();
            assertTrue(!extents.get(0).hole() && dataEnd >= data.length && dataEnd < data.length + 64 * K, extents.toString());
            assertEquals(hole(dataEnd, 8 * M + 1), extents.get(1), "the grown part is a hole");
            assertBytes(model.bytes(), Fixtures.read(file, 0, model.size(), BufferKind.DIRECT), "after growing");
            file.resize(50_000);
            model.resize(50_000);
            assertEquals(50_000, file.size());
            assertEquals(0, Fixtures.read(file, 50_000, 100, BufferKind.HEAP).length, "nothing past the new end");
            file.resize(60_000); // grow again: the cut bytes must not come back
            model.resize(60_000);
            assertBytes(model.bytes(), Fixtures.read(file, 0, 70_000, BufferKind.DIRECT_UNALIGNED), "shrunk and regrown");
            file.resize(0);
            assertEquals(0, file.size());
            assertEquals(List.of(), file.extents(0, Long.MAX_VALUE));
        }
    }

    @ParameterizedTest
    @EnumSource(CacheMode.class)
    void statsCountOperationsAndBytes(CacheMode mode) throws Exception {
        Path path = dir.resolve("stats");
        try (StorageFile file = StorageFile.open(path, mode, CREATE_NEW, READ, WRITE)) {
            assertEquals(new IoStats(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), file.stats());
            Fixtures.write(file, 0, new byte[10_000], BufferKind.HEAP);
            Fixtures.write(file, 5000, new byte[3000], BufferKind.DIRECT, true);
            Fixtures.read(file, 0, 4096, BufferKind.HEAP);
            Fixtures.read(file, 8000, 4096, BufferKind.DIRECT); // short: 2000 bytes
            Fixtures.read(file, 20_000, 100, BufferKind.HEAP);  // past the end: 0 bytes, still a read
            file.flush();
            file.zero(0, 100, true);
            file.zero(9000, 5000, false);
            file.trim(0, 4096);
            file.size();
            file.advise(AccessHint.NORMAL);
            file.extents(0, 100);
            // What reached the kernel: the FUA write as one RWF_DSYNC write (both writes in WRITETHROUGH, none in
            // UNSAFE; DIRECT writes the whole blocks it covers), no RWF_DONTCACHE read (none covers a whole 2 MiB
            // window), and the flush as one fdatasync. Where every write is durable, each zero and trim is synced as
            // well (three more), and DIRECTSYNC writes the first write's bytes in its last, partial block through
            // the page cache as one more RWF_DSYNC write (O_DIRECT would have written the whole block).
            int dsyncWrites = mode == CacheMode.UNSAFE ? 0 : mode == CacheMode.WRITETHROUGH || mode == CacheMode.DIRECTSYNC
                    ? 2 : 1;
            int block = file.alignment().offset();
            long dsyncBytes = mode == CacheMode.UNSAFE ? 0 : mode == CacheMode.WRITETHROUGH ? 13_000
                    : mode.isDirect() ? (8000 + block - 1) / block * block - 5000 / block * block : 3000;
            if (mode == CacheMode.DIRECTSYNC) dsyncBytes += 10_000 % block;
            int syncs = mode == CacheMode.UNSAFE ? 0 : mode == CacheMode.WRITETHROUGH || mode == CacheMode.DIRECTSYNC
                    ? 4 : 1;
            assertEquals(new IoStats(3, 4096 + 2000, 2, 13_000, 1, 2, 5100, 1, 4096, 0, 0, dsyncWrites, dsyncBytes,
                    syncs), file.stats());
        }
    }

    @ParameterizedTest
    @EnumSource(CacheMode.class)
    void hintsPrefetchAndEvictWorkWithEveryAccessHint(CacheMode mode) throws Exception {
        Path path = dir.resolve("hints");
        byte[] content = Fixtures.random(8, 3 * M + 5);
        Files.write(path, content);
        try (StorageFile file = StorageFile.open(path, mode, READ, WRITE)) {
            for (AccessHint hint : AccessHint.values()) {
                file.advise(hint);
                file.advise(4096, 64 * K, hint);
                file.advise(100, 3, hint);
                file.advise(0, 0, hint);
                file.advise(10 * M, M, hint); // past the end of file
            }
            file.prefetch(0, content.length);
            file.prefetch(M + 1, 5);
            file.prefetch(10 * M, M);
            file.evict();
            file.evict(M, M);
            file.evict(10 * M, 1);
            // Evicting a range with dirty pages writes them back first: nothing is lost.
            byte[] dirty = Fixtures.random(9, 200 * K);
            Fixtures.write(file, 2 * M + 1, dirty, BufferKind.HEAP);
            System.arraycopy(dirty, 0, content, 2 * M + 1, dirty.length);
            file.evict(2 * M, M);
            file.evict(0, content.length);
            assertBytes(content, Fixtures.read(file, 0, content.length, BufferKind.DIRECT), "after hints");
        }
        assertBytes(content, Files.readAllBytes(path), "via Files.readAllBytes");
    }

    @ParameterizedTest
    @EnumSource(CacheMode.class)
    void alignmentIsSanePowersOfTwo(CacheMode mode) throws Exception {
        Path path = dir.resolve("alignment");
        Files.write(path, new byte[1]);
        try (StorageFile file = StorageFile.open(path, mode)) {
            Alignment a = file.alignment();
            for (int value : new int[] {a.memory(), a.offset(), a.logicalBlockSize()}) {
                assertTrue(value >= 1 && value <= 64 * K && Integer.bitCount(value) == 1, a.toString());
            }
            assertTrue(a.offset() >= 512, "O_DIRECT offsets align to at least a sector: " + a);
            assertTrue(a.logicalBlockSize() >= 512, a.toString());
            assertEquals(false, file.isBlockDevice());
        }
    }
}

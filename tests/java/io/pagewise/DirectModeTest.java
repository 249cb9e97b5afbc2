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
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * O_DIRECT specifics: read-modify-write of partial blocks, the last partial block written without growing the file,
 * coherence with buffered readers and writers, and edge blocks shared by many writers at once.
 */
@Timeout(60)
class DirectModeTest {
    @TempDir
    Path dir;

    @ParameterizedTest
    @EnumSource(value = CacheMode.class, names = {"DIRECT", "DIRECTSYNC"})
    void writingInsideTheLastPartialBlockKeepsTheSize(CacheMode mode) throws Exception {
        Path path = dir.resolve("tail");
        byte[] content = Fixtures.random(1, 10_000);
        Files.write(path, content);
        try (StorageFile file = StorageFile.open(path, mode, READ, WRITE)) {
            assertEquals(mode, file.cacheMode());
            byte[] patch = Fixtures.random(2, 10);
            Fixtures.write(file, 9000, patch, BufferKind.HEAP);
            System.arraycopy(patch, 0, content, 9000, patch.length);
            assertEquals(10_000, file.size(), "a write inside the file must not grow it to the block end");
            byte[] last = Fixtures.random(3, 1);
            Fixtures.write(file, 9999, last, BufferKind.DIRECT_UNALIGNED);
            content[9999] = last[0];
            assertEquals(10_000, file.size());
        }
        assertBytes(content, Files.readAllBytes(path), "content");
    }

    @ParameterizedTest
    @EnumSource(value = CacheMode.class, names = {"DIRECT", "DIRECTSYNC"})
    void afterResizeToAnUnalignedSizeWritesStillKeepTheExactSize(CacheMode mode) throws Exception {
        Path path = dir.resolve("resized");
        Model model = new Model();
        try (StorageFile file = StorageFile.open(path, mode, CREATE_NEW, READ, WRITE)) {
            byte[] data = Fixtures.random(4, 64 * 1024);
            Fixtures.write(file, 0, data, BufferKind.DIRECT);
            model.write(0, data);
            file.resize(5000);
            model.resize(5000);
            assertEquals(5000, file.size());
            byte[] patch = Fixtures.random(5, 100);
            Fixtures.write(file, 4000, patch, BufferKind.HEAP);
            model.write(4000, patch);
            assertEquals(5000, file.size(), "write inside the shrunk file");
            file.resize(20_000);
            model.resize(20_000);
            Fixtures.write(file, 19_990, patch, BufferKind.HEAP_SLICE);
            model.write(19_990, patch);
            assertEquals(20_090, file.size(), "write across the end of the grown file");
            assertBytes(model.bytes(), Fixtures.read(file, 0, 30_000, BufferKind.DIRECT), "content");
        }
    }

    @ParameterizedTest
    @EnumSource(value = CacheMode.class, names = {"DIRECT", "DIRECTSYNC"})
    void emptyWritesPastTheEndChangeNothing(CacheMode mode) throws Exception {
        Path path = dir.resolve("empty-writes");
        try (StorageFile file = StorageFile.open(path, mode, CREATE_NEW, READ, WRITE)) {
            file.write(Fixtures.alignedDirect(4096).limit(0), 1 << 20);
            file.write(ByteBuffer.allocate(0), 12_345);
            assertEquals(0, file.size(), "empty writes must not grow the file");
            byte[] data = Fixtures.random(6, 100);
            Fixtures.write(file, 100, data, BufferKind.HEAP);
            assertEquals(200, file.size(), "a later small write must leave exactly its end as the size");
            assertBytes(data, Fixtures.read(file, 100, 200, BufferKind.HEAP), "data");
        }
    }

    @ParameterizedTest
    @EnumSource(value = CacheMode.class, names = {"DIRECT", "DIRECTSYNC"})
    void directAndBufferedIoSeeEachOthersWrites(CacheMode mode) throws Exception {
        Path path = dir.resolve("coherent");
        byte[] content = Fixtures.random(7, 3 * 4096 + 77);
        Files.write(path, content);
        try (StorageFile file = StorageFile.open(path, mode, READ, WRITE);
             FileChannel buffered = FileChannel.open(path, READ, WRITE)) {
            // Buffered write of cached pages, then an O_DIRECT read must see it.
            assertBytes(content, Fixtures.read(file, 0, content.length, BufferKind.DIRECT), "initial");
            byte[] viaBuffered = Fixtures.random(8, 1000);
            buffered.write(ByteBuffer.wrap(viaBuffered), 4000);
            System.arraycopy(viaBuffered, 0, content, 4000, viaBuffered.length);
            assertBytes(content, Fixtures.read(file, 0, content.length, BufferKind.HEAP), "O_DIRECT read after buffered write");
            // O_DIRECT read-modify-write, then a buffered read must see it.
            byte[] viaDirect = Fixtures.random(9, 3000);
            Fixtures.write(file, 2500, viaDirect, BufferKind.HEAP);
            System.arraycopy(viaDirect, 0, content, 2500, viaDirect.length);
            ByteBuffer all = ByteBuffer.allocate(content.length);
            buffered.read(all, 0);
            assertBytes(content, all.array(), "buffered read after O_DIRECT write");
        }
    }

    /**
     * Many threads each own scattered runs of 1 to 7 bytes of the same few blocks, so nearly every write is a
     * read-modify-write of a block another thread is modifying at the same moment. A missing edge lock loses bytes.
     */
    @ParameterizedTest
    @EnumSource(value = CacheMode.class, names = {"DIRECT", "DIRECTSYNC"})
    void writersSharingBlocksByteByByteLoseNothing(CacheMode mode) throws Exception {
        Path path = dir.resolve("shared-blocks");
        int total = mode == CacheMode.DIRECT ? 3 * 4096 : 4096 + 512; // DIRECTSYNC syncs every write: keep it short
        int threads = 6;
        byte[] expected = Fixtures.random(10, total);
        Files.write(path, new byte[total]);
        List<int[]> pieces = new ArrayList<>();
        Random random = new Random(11);
        for (int at = 0; at < total; ) {
            int length = Math.min(1 + random.nextInt(7), total - at);
            pieces.add(new int[] {at, length});
            at += length;
        }
        try (StorageFile file = StorageFile.open(path, mode, READ, WRITE)) {
            Fixtures.writeConcurrently(file, expected, threads, false, pieces);
            assertEquals(total, file.size());
            assertBytes(expected, Fixtures.read(file, 0, total, BufferKind.DIRECT), "every byte after concurrent RMW");
        }
        assertBytes(expected, Files.readAllBytes(path), "every byte via Files.readAllBytes");
    }

    @ParameterizedTest
    @EnumSource(value = CacheMode.class, names = {"DIRECT", "DIRECTSYNC"})
    void requestsAtTheReportedAlignmentWork(CacheMode mode) throws Exception {
        Path path = dir.resolve("aligned");
        try (StorageFile file = StorageFile.open(path, mode, CREATE_NEW, READ, WRITE)) {
            Alignment alignment = file.alignment();
            int block = alignment.offset();
            assertTrue(Integer.bitCount(block) == 1 && block >= 512 && block <= 4096, "offset alignment " + block);
            assertTrue(Integer.bitCount(alignment.memory()) == 1, "memory alignment " + alignment.memory());
            byte[] data = Fixtures.random(12, 3 * block);
            Fixtures.write(file, block, data, BufferKind.DIRECT);
            assertEquals(4L * block, file.size());
            assertBytes(new byte[block], Fixtures.read(file, 0, block, BufferKind.DIRECT), "leading hole");
            assertBytes(data, Fixtures.read(file, block, 3 * block, BufferKind.DIRECT), "aligned data");
        }
    }
    /**
     * Writes into the last, partial block of a file, watched from outside (stat, as another program or a second
     * server would see the file): its size never changes, and nothing of the file stays in the page cache. O_DIRECT
     * writes whole blocks, so that block used to be padded on disk and cut back, and a second device opened on the
     * file in between (serve --dir) saw, and kept, the padded size.
     */
    @ParameterizedTest
    @EnumSource(value = CacheMode.class, names = {"DIRECT", "DIRECTSYNC"})
    void writesIntoTheLastPartialBlockNeverChangeTheSizeOthersSee(CacheMode mode) throws Exception {
        Path path = dir.resolve("odd.raw");
        long size = (1 << 20) + 7;
        try (java.io.RandomAccessFile raf = new java.io.RandomAccessFile(path.toFile(), "rw")) {
            raf.setLength(size);
        }
        java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
        java.util.concurrent.ConcurrentLinkedQueue<Long> seen = new java.util.concurrent.ConcurrentLinkedQueue<>();
        Thread watcher = new Thread(() -> {
            try {
                while (!stop.get()) {
                    long now = Files.size(path);
                    if (now != size && seen.size() < 5) seen.add(now);
                }
            } catch (java.io.IOException e) {
                seen.add(-1L);
            }
        });
        byte[] last = new byte[3];
        try (StorageFile file = StorageFile.open(path, mode, READ, WRITE)) {
            watcher.start();
            long until = System.nanoTime() + 500_000_000L;
            for (int i = 0; System.nanoTime() < until; i++) {
                last = new byte[] {(byte) i, (byte) (i >> 8), 7};
                file.write(ByteBuffer.wrap(last), size - 3);
                file.write(ByteBuffer.wrap(new byte[600]), size - 600 - 3); // a block and a bit, ending in the last
            }
        } finally {
            stop.set(true);
            watcher.join(10_000);
        }
        assertTrue(seen.isEmpty(), "sizes seen from outside besides " + size + ": " + seen);
        assertEquals(size, Files.size(path));
        assertEquals(0, io.pagewise.PageCache.residency(path).residentPages(), "pages left in the page cache");
        byte[] onDisk = Files.readAllBytes(path);
        assertBytes(last, java.util.Arrays.copyOfRange(onDisk, (int) size - 3, (int) size), "the last write's bytes");
    }

    /**
     * Writers of whole blocks in the last page while another writes into the last, partial block of that page,
     * which goes through the page cache: the kernel writes that page back whole, so a page read before a block
     * writer's O_DIRECT write and written back after it would undo it. Each writer reads its block back after every
     * write; the file is a hole at first, so block writes go by io_submit, whose completion drops cached pages late.
     */
    @ParameterizedTest
    @EnumSource(value = CacheMode.class, names = {"DIRECT"})
    void blockWritersBesideTheLastPartialBlockKeepTheirBytes(CacheMode mode) throws Exception {
        Path path = dir.resolve("last-page.raw");
        try (StorageFile file = StorageFile.open(path, mode, READ, WRITE, CREATE_NEW)) {
            int block = file.alignment().offset();
            int page = 4096;
            if (block * 2 > page) {
                io.pagewise.testing.ExternalTools.unavailable("O_DIRECT alignment " + block
                        + " here: one block per page, nothing shares the last page", "ext4 on 512-byte sectors");
            }
            long size = (1 << 20) + page - 100; // the last page: whole blocks, then a partial one
            file.resize(size);
            long pageStart = (1 << 20);
            int writers = Math.min(3, (page - 100) / block - 1);
            java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
            java.util.concurrent.ConcurrentLinkedQueue<String> wrong = new java.util.concurrent.ConcurrentLinkedQueue<>();
            List<Thread> threads = new ArrayList<>();
            for (int w = 0; w < writers; w++) {
                long at = pageStart + (long) w * block;
                int id = w;
                threads.add(new Thread(() -> {
                    try {
                        ByteBuffer out = ByteBuffer.allocateDirect(block + 8192).alignedSlice(4096).slice(0, block);
                        ByteBuffer in = ByteBuffer.allocateDirect(block + 8192).alignedSlice(4096).slice(0, block);
                        for (int i = 1; !stop.get() && wrong.size() < 3; i++) {
                            for (int b = 0; b < block; b++) out.put(b, (byte) (i * 7 + id));
                            file.write(out.clear(), at);
                            file.trim(at, block); // a hole again: the next write goes by io_submit
                            file.write(out.clear(), at);
                            file.read(in.clear(), at);
                            if (!in.clear().equals(out.clear())) wrong.add("block at " + at + ": write " + i + " undone");
                        }
                    } catch (Exception e) {
                        wrong.add(at + ": " + e);
                    }
                }));
            }
            threads.add(new Thread(() -> {
                try {
                    for (int i = 0; !stop.get(); i++) file.write(ByteBuffer.wrap(new byte[] {(byte) i, 1, 2, 3}), size - 4);
                } catch (Exception e) {
                    wrong.add("tail: " + e);
                }
            }));
            threads.forEach(Thread::start);
            Thread.sleep(1500);
            stop.set(true);
            for (Thread t : threads) t.join(10_000);
            assertTrue(wrong.isEmpty(), wrong.toString());
            assertEquals(size, Files.size(path));
        }
    }

    /** A file cut by someone else: the next short write does not leave the file padded to a whole block. */
    @ParameterizedTest
    @EnumSource(value = CacheMode.class, names = {"DIRECT", "DIRECTSYNC"})
    void aShortWriteAfterAnotherProgramCutTheFileKeepsItsSize(CacheMode mode) throws Exception {
        Path path = dir.resolve("cut.raw");
        try (StorageFile file = StorageFile.open(path, mode, READ, WRITE, CREATE_NEW)) {
            file.resize(1 << 20);
            try (FileChannel other = FileChannel.open(path, WRITE)) {
                other.truncate(0);
            }
            file.write(ByteBuffer.wrap(new byte[] {1, 2, 3}), 0);
            assertEquals(3, file.size());
        }
        assertEquals(3, Files.size(path));
    }

    /**
     * Resizes and short writes from two threads: after each write the file is as long as one order of the calls
     * makes it (the write's end, or the size a resize set after it), never padded to the block's end; and a third
     * thread asking the size never sees the padding of a write in progress.
     */
    @ParameterizedTest
    @EnumSource(value = CacheMode.class, names = {"DIRECT"})
    void resizesAndShortWritesFromTwoThreadsNeverShowThePadding(CacheMode mode) throws Exception {
        Path path = dir.resolve("race.raw");
        long big = 1 << 20;
        try (StorageFile file = StorageFile.open(path, mode, READ, WRITE, CREATE_NEW)) {
            java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
            java.util.concurrent.ConcurrentLinkedQueue<String> wrong = new java.util.concurrent.ConcurrentLinkedQueue<>();
            Thread resizer = new Thread(() -> {
                try {
                    while (!stop.get()) {
                        file.resize(0);
                        file.resize(big);
                    }
                } catch (Exception e) {
                    wrong.add("resize: " + e);
                }
            });
            Thread watcher = new Thread(() -> {
                try {
                    while (!stop.get()) {
                        long size = file.size();
                        if (size != 0 && size != 100 && size != big) wrong.add("size() saw " + size);
                    }
                } catch (Exception e) {
                    wrong.add("size: " + e);
                }
            });
            resizer.start();
            watcher.start();
            ByteBuffer hundred = ByteBuffer.allocate(100);
            long until = System.nanoTime() + 1_000_000_000L;
            int writes = 0;
            while (System.nanoTime() < until && wrong.size() < 5) {
                file.write(hundred.clear(), 0);
                long size = file.size();
                if (size != 100 && size != big && size != 0) wrong.add("after a write of 100 bytes at 0 the size was " + size);
                writes++;
            }
            stop.set(true);
            resizer.join(10_000);
            watcher.join(10_000);
            assertTrue(wrong.isEmpty(), wrong.toString());
            assertTrue(writes > 100, "setup: writes made " + writes);
        }
    }
}

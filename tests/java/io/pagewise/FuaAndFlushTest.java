package io.pagewise;

import static io.pagewise.Fixtures.assertBytes;
import static java.nio.file.StandardOpenOption.CREATE_NEW;
import static java.nio.file.StandardOpenOption.READ;
import static java.nio.file.StandardOpenOption.WRITE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.Fixtures.BufferKind;
import io.pagewise.Fixtures.Model;
import io.pagewise.system.NativeIOException;
import io.pagewise.testing.ExternalTools;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * FUA writes and flush in every mode: the data is readable afterwards, nothing throws, FUA reaches the kernel as
 * RWF_DSYNC where the mode says so, UNSAFE never syncs, and {@code cacheMode()} reports the mode in effect.
 */
@Timeout(60)
class FuaAndFlushTest {
    private static final Path DEV_NULL = Path.of("/dev/null");

    @TempDir
    Path dir;

    @ParameterizedTest
    @EnumSource(CacheMode.class)
    void fuaWritesAndFlushLeaveTheDataReadable(CacheMode mode) throws Exception {
        Path path = dir.resolve("fua");
        Model model = new Model();
        long[][] cases = {{0, 4096}, {4096, 8192}, {100, 50}, {12_345, 70_000}, {(1 << 20) + 1, 3}};
        try (StorageFile file = StorageFile.open(path, mode, CREATE_NEW, READ, WRITE)) {
            assertEquals(mode, file.requestedMode());
            for (int i = 0; i < cases.length; i++) {
                byte[] data = Fixtures.random(i, (int) cases[i][1]);
                Fixtures.write(file, cases[i][0], data, BufferKind.inTurn(i), true);
                model.write(cases[i][0], data);
                assertBytes(data, Fixtures.read(file, cases[i][0], data.length, BufferKind.inTurn(i)),
                        "after FUA write at " + cases[i][0]);
                assertEquals(model.size(), file.size());
            }
            file.flush();
            byte[] more = Fixtures.random(99, 5000);
            Fixtures.write(file, 3000, more, BufferKind.HEAP);
            model.write(3000, more);
            file.flush();
            file.flush();
            IoStats stats = file.stats();
            assertEquals(3, stats.flushes(), "flush count");
            assertEquals(cases.length + 1, stats.writes(), "write count");
            if (file.isNative()) {
                // Counted in C at the syscalls: every FUA write went to the kernel with RWF_DSYNC (WRITETHROUGH's
                // plain write too; DIRECTSYNC's plain write rests on O_DSYNC), none under UNSAFE. Under O_DIRECT the
                // write at 12,345 that grows the file to an end inside a block goes as two, its whole blocks by
                // O_DIRECT and its last, partial block through the page cache, each with RWF_DSYNC.
                long expected = mode == CacheMode.UNSAFE ? 0 : cases.length + (mode == CacheMode.WRITETHROUGH ? 1 : 0)
                        + (mode.isDirect() ? 1 : 0);
                assertEquals(expected, stats.dsyncWrites(), "writes that reached the kernel with RWF_DSYNC");
            }
            // A second, independent descriptor sees everything.
            try (StorageFile other = StorageFile.open(path, CacheMode.WRITEBACK)) {
                assertBytes(model.bytes(), Fixtures.read(other, 0, model.size(), BufferKind.HEAP), "other descriptor");
            }
        }
        assertBytes(model.bytes(), Files.readAllBytes(path), "after close");
    }

    @ParameterizedTest
    @EnumSource(CacheMode.class)
    void cacheModeReportsTheModeInEffect(CacheMode mode) throws Exception {
        Path path = dir.resolve("mode");
        Files.write(path, Fixtures.random(1, 10_000));
        try (StorageFile file = StorageFile.open(path, mode, READ, WRITE)) {
            assertEquals(mode, file.requestedMode());
            CacheMode effective = file.cacheMode();
            if (mode == CacheMode.DONTCACHE) {
                // Whether this kernel and filesystem take RWF_DONTCACHE decides it; either way it is settled at open
                // for a non-empty file and stays so.
                assertTrue(effective == CacheMode.DONTCACHE || effective == CacheMode.EVICT, effective.toString());
                Fixtures.write(file, 0, Fixtures.random(2, 100), BufferKind.HEAP);
                Fixtures.read(file, 0, 100, BufferKind.DIRECT);
                assertEquals(effective, file.cacheMode(), "the effective mode must not change after I/O");
            } else {
                assertEquals(mode, effective);
            }
            assertEquals(Native.isAvailable(), file.isNative());
        }
    }

    /** tmpfs does not take RWF_DONTCACHE: DONTCACHE must fall back to EVICT and still write each byte once. */
    @Test
    void dontcacheFallsBackToEvictWhereTheFilesystemRefusesIt() throws Exception {
        Path tmp = Files.createTempDirectory(ExternalTools.tmpfs(), "pagewise-test-");
        try {
            Path empty = tmp.resolve("empty");
            Model model = new Model();
            try (StorageFile file = StorageFile.open(empty, CacheMode.DONTCACHE, CREATE_NEW, READ, WRITE)) {
                // An empty file cannot be probed at open, and writes go as in EVICT without asking for RWF_DONTCACHE:
                // the first uncached read (a whole 2 MiB window) finds out; nothing may be lost or doubled.
                byte[] small = Fixtures.random(5, 5000);
                Fixtures.write(file, 10, small, BufferKind.HEAP);
                model.write(10, small);
                byte[] first = Fixtures.random(3, 2 << 20);
                Fixtures.write(file, 2 << 20, first, BufferKind.DIRECT);
                model.write(2 << 20, first);
                assertBytes(first, Fixtures.read(file, 2 << 20, 2 << 20, BufferKind.DIRECT), "a whole window");
                assertEquals(CacheMode.EVICT, file.cacheMode());
                assertEquals(CacheMode.DONTCACHE, file.requestedMode());
                byte[] second = Fixtures.random(4, 3 << 20);
                Fixtures.write(file, 4000, second, BufferKind.DIRECT_UNALIGNED, true);
                model.write(4000, second);
                assertBytes(model.bytes(), Fixtures.read(file, 0, model.size() + 10, BufferKind.HEAP), "after fallback");
                file.flush();
            }
            assertBytes(model.bytes(), Files.readAllBytes(empty), "file content");

            Path full = tmp.resolve("full");
            Files.write(full, model.bytes());
            try (StorageFile file = StorageFile.open(full, CacheMode.DONTCACHE)) {
                assertEquals(CacheMode.EVICT, file.cacheMode(), "a non-empty file is probed at open");
                assertBytes(model.bytes(), Fixtures.read(file, 0, model.size(), BufferKind.DIRECT), "read");
            }
        } finally {
            try (Stream<Path> files = Files.walk(tmp)) {
                for (Path p : (Iterable<Path>) files.sorted(Comparator.reverseOrder())::iterator) Files.delete(p);
            }
        }
    }

    /** fdatasync on /dev/null fails with EINVAL, which makes a real sync observable; UNSAFE, which does not {@link CacheMode#flushSyncs()}, must not make one. */
    @ParameterizedTest
    @EnumSource(value = CacheMode.class, names = {"WRITEBACK", "WRITETHROUGH", "EVICT", "DONTCACHE", "UNSAFE"})
    void unsafeFlushIsANoOpAndTheOthersSync(CacheMode mode) throws Exception {
        try (StorageFile file = StorageFile.open(DEV_NULL, mode, WRITE)) {
            if (!mode.flushSyncs()) {
                file.flush();
                assertEquals(1, file.stats().flushes());
            } else {
                NativeIOException e = assertThrows(NativeIOException.class, file::flush);
                assertEquals("fdatasync", e.operation());
                assertEquals("EINVAL", e.errnoName());
                assertEquals(DEV_NULL, e.path());
                assertEquals(0, file.stats().flushes(), "a failed flush is not counted");
            }
        }
    }

    /**
     * A positional write to a FIFO fails with ESPIPE before the kernel looks at the RWF flags, and the exception
     * names the failing call: that shows whether a write went out as plain pwrite or as pwritev2 with RWF_DSYNC
     * (FUA, write-through), and that DONTCACHE writes whole 2 MiB windows as EVICT does, without RWF_DONTCACHE.
     */
    @ParameterizedTest
    @EnumSource(value = CacheMode.class, names = {"WRITEBACK", "WRITETHROUGH", "EVICT", "DONTCACHE", "UNSAFE"})
    void fuaReachesTheKernelAsRwfDsyncWhereTheModeSaysSo(CacheMode mode) throws Exception {
        Path fifo = dir.resolve("fifo");
        ExternalTools.run(10, "mkfifo", fifo.toString()).assertOk("mkfifo " + fifo);
        for (boolean fua : new boolean[] {false, true}) {
            // O_RDWR: opening does not block. StorageFile.open refuses a pipe; this test wants its ESPIPE.
            try (StorageFile file = StorageFile.openAnyKind(fifo, mode, READ, WRITE)) {
                NativeIOException e = assertThrows(NativeIOException.class,
                        () -> file.write(ByteBuffer.allocateDirect(512), 0, fua));
                assertEquals("ESPIPE", e.errnoName());
                boolean dsync = mode.syncsEveryWrite() || (fua && mode.flushSyncs());
                // DONTCACHE writes as EVICT does (buffered and written back by window here, where no O_DIRECT is).
                String expected = dsync ? "pwritev2 (RWF_DSYNC)" : "pwritev";
                assertEquals(expected, e.operation(), mode + " fua=" + fua);
                assertEquals(0, file.stats().writes(), "a failed write is not counted");
                if (mode == CacheMode.DONTCACHE) {
                    // Whole 2 MiB windows too: RWF_DONTCACHE writes had a p99 latency 2.7-5 times O_DIRECT's.
                    NativeIOException window = assertThrows(NativeIOException.class,
                            () -> file.write(ByteBuffer.allocateDirect(2 << 20), 2 << 20, fua));
                    assertEquals(expected, window.operation(), "a whole window, fua=" + fua);
                }
            }
        }
    }
}

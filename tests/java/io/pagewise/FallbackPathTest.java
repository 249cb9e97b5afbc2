package io.pagewise;

import static io.pagewise.Fixtures.assertBytes;
import static java.nio.file.StandardOpenOption.CREATE;
import static java.nio.file.StandardOpenOption.CREATE_NEW;
import static java.nio.file.StandardOpenOption.READ;
import static java.nio.file.StandardOpenOption.WRITE;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.cli.CommandRun;
import io.pagewise.Fixtures.BufferKind;
import io.pagewise.Fixtures.Model;
import io.pagewise.backends.FileDevice;
import io.pagewise.cli.Main;
import io.pagewise.device.BlockDevice;
import io.pagewise.device.Capabilities;
import io.pagewise.device.Capability;
import io.pagewise.device.DeviceException;
import io.pagewise.nbd.client.NbdClient;
import io.pagewise.nbd.NbdException;
import io.pagewise.nbd.server.NbdServer;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.io.IOException;
import io.pagewise.system.Alignment;
import io.pagewise.system.NativeIOException;
import io.pagewise.system.SystemCallFailure;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The pure-Java path. Runs in its own surefire execution with {@code -Dpagewise.native=false} (see pom.xml), since
 * the native library is loaded at most once per JVM. The whole public API is used once; what needs the native
 * library must say so with UnsupportedOperationException.
 */
@Tag("fallback")
@Timeout(60)
class FallbackPathTest {
    @TempDir
    Path dir;

    @Test
    void theNativeLibraryIsNotLoadedAndSaysWhy() {
        assertFalse(Native.isAvailable());
        Throwable error = Native.loadError();
        assertNotNull(error);
        assertTrue(error.getMessage().contains("pagewise.native"), error.getMessage());
        // Where, why, and what still works.
        assertTrue(error.getMessage().startsWith("not loaded on " + Native.platform() + ": "), error.getMessage());
        assertTrue(error.getMessage().contains("WRITEBACK, WRITETHROUGH and UNSAFE work on the pure-Java path"),
                error.getMessage());
        // The platforms whose library the class path carries; NativeLoaderTest checks the list.
        assertTrue(error.getMessage().contains(". The jar carries it for ") && error.getMessage().contains(
                Native.platform()) && error.getMessage().contains(" with glibc 2.17 or later."), error.getMessage());
    }

    @ParameterizedTest
    @EnumSource(value = CacheMode.class, names = {"WRITEBACK", "WRITETHROUGH", "UNSAFE"})
    void bufferedModesRoundTripOnThePureJavaPath(CacheMode mode) throws Exception {
        Path path = dir.resolve("data");
        Random random = new Random(mode.ordinal());
        Model model = new Model();
        // WRITE without READ: reads must work all the same, as on the native path.
        try (StorageFile file = StorageFile.open(path, mode, CREATE_NEW, WRITE)) {
            assertFalse(file.isNative());
            assertEquals(mode, file.cacheMode());
            assertEquals(mode, file.requestedMode());
            assertTrue(file.isWritable());
            long[][] cases = {{0, 4096}, {4095, 2}, {511, 513}, {8191, (1 << 20) + 3}, {(3 << 20) + 123, 70_001},
                {100, 5000}, {3 * 4096, 4096}};
            for (int i = 0; i < cases.length + 10; i++) {
                long offset = i < cases.length ? cases[i][0] : random.nextInt(4 << 20);
                int length = i < cases.length ? (int) cases[i][1] : 1 + random.nextInt(100_000);
                BufferKind kind = BufferKind.inTurn(i);
                byte[] data = model.writeRandom(file, random, offset, length, kind, i % 3 == 0);
                assertBytes(data, Fixtures.read(file, offset, length, kind), "read back at " + offset);
            }
            assertBytes(model.bytes(), Fixtures.read(file, 0, model.size() + 5000, BufferKind.HEAP), "whole file");
            assertEquals(-1, file.read(ByteBuffer.allocateDirect(100), model.size()), "at the end");
            assertEquals(-1, file.read(ByteBuffer.allocate(100), model.size() + 100), "past the end");
            assertEquals(0, Fixtures.read(file, model.size(), 100, BufferKind.DIRECT).length, "at the end");
            file.flush();
            IoStats stats = file.stats();
            assertEquals(17, stats.writes());
            assertEquals(1, stats.flushes());
        }
        assertBytes(model.bytes(), Files.readAllBytes(path), "via Files.readAllBytes");
    }

    @Test
    void concurrentWritersKeepEveryByte() throws Exception {
        Path path = dir.resolve("concurrent");
        int total = (1 << 20) + 777;
        byte[] expected = Fixtures.random(5, total);
        try (StorageFile file = StorageFile.open(path, CacheMode.WRITEBACK, CREATE_NEW, READ, WRITE)) {
            ExecutorService pool = Executors.newFixedThreadPool(4);
            try {
                List<Future<?>> done = new ArrayList<>();
                for (int t = 0; t < 4; t++) {
                    int id = t;
                    done.add(pool.submit(() -> {
                        for (int at = id * 3001, piece = 0; at < total; at += 4 * 3001, piece++) {
                            int length = Math.min(3001, total - at);
                            Fixtures.write(file, at, java.util.Arrays.copyOfRange(expected, at, at + length),
                                    BufferKind.inTurn(piece));
                        }
                        return null;
                    }));
                }
                for (Future<?> f : done) f.get();
            } finally {
                pool.shutdownNow();
            }
            assertEquals(total, file.size());
        }
        assertBytes(expected, Files.readAllBytes(path), "content");
    }

    @Test
    void spaceOperationsHintsAndStatsWorkOnThePureJavaPath() throws Exception {
        Path path = dir.resolve("space");
        Model model = new Model();
        model.write(0, Fixtures.random(6, 300_000));
        Files.write(path, model.bytes());
        try (StorageFile file = StorageFile.open(path, CacheMode.WRITEBACK, READ, WRITE)) {
            file.zero(1000, 5000, true);
            model.zero(1000, 5000, false);
            file.zero(100_000, 70_000, false);
            model.zero(100_000, 70_000, false);
            file.zero(299_000, 3000, true); // across the end: grows the file
            model.zero(299_000, 3000, true);
            assertEquals(model.size(), file.size());
            assertBytes(model.bytes(), Fixtures.read(file, 0, model.size(), BufferKind.DIRECT), "after zero");

            // Without the native library nothing can punch holes: trim may leave the data, but it must not fail,
            // change the size or touch anything outside its range.
            file.trim(200_000, 10_000);
            file.trim(model.size() - 10, 1 << 20);
            assertEquals(model.size(), file.size());
            byte[] after = Fixtures.read(file, 0, model.size(), BufferKind.HEAP);
            byte[] expected = model.bytes();
            for (int i = 0; i < expected.length; i++) {
                boolean trimmed = (i >= 200_000 && i < 210_000) || i >= model.size() - 10;
                if (!trimmed || after[i] != 0) assertEquals(expected[i], after[i], "byte " + i);
            }

            // No holes can be seen here: the file is one data extent, clipped to its size.
            assertEquals(List.of(new Extent(0, model.size(), false)), file.extents(0, Long.MAX_VALUE));
            assertEquals(List.of(new Extent(10, 90, false)), file.extents(10, 90));
            assertEquals(List.of(), file.extents(model.size(), 10));

            file.resize(1 << 20);
            model.resize(1 << 20);
            assertEquals(1 << 20, file.size());
            file.resize(4097);
            model.resize(4097);
            assertEquals(4097, file.size());
            file.resize(8000);
            model.resize(8000);
            assertBytes(model.bytes(), Fixtures.read(file, 0, 9000, BufferKind.HEAP_SLICE), "after resizes");

            for (AccessHint hint : AccessHint.values()) {
                file.advise(hint);
                file.advise(0, 4096, hint);
            }
            file.prefetch(0, 8000);
            file.evict(0, 8000);
            file.evict();
            Alignment alignment = file.alignment();
            assertTrue(Integer.bitCount(alignment.offset()) == 1 && Integer.bitCount(alignment.memory()) == 1
                    && Integer.bitCount(alignment.logicalBlockSize()) == 1, alignment.toString());
            assertFalse(file.isBlockDevice());
            Fixtures.write(file, 0, new byte[10], BufferKind.HEAP, true);
            file.flush();
            // 3 reads: 302000 + 302000 + 8000 bytes; zero-filling writes made by zero() are not counted as writes.
            assertEquals(new IoStats(3, 612_000, 1, 10, 1, 3, 78_000, 2, 10_000 + (1 << 20), 0, 0, 1, 10, 2), file.stats(),
                    "the FUA write: one write followed by a sync of the file; then the flush");
        }
        assertEquals(8000, Files.size(path));
    }

    @Test
    void modesAndCallsThatNeedTheNativeLibrarySaySo() throws Exception {
        Path path = dir.resolve("native-only");
        for (CacheMode mode : CacheMode.values()) {
            assertEquals(!mode.needsNative(), mode.isAvailable(), mode.toString());
            if (mode.isAvailable()) {
                StorageFile.open(path, mode, CREATE, WRITE).close();
                Files.delete(path);
                continue;
            }
            UnsupportedOperationException e = assertThrows(UnsupportedOperationException.class,
                    () -> StorageFile.open(path, mode, CREATE, WRITE), mode.toString());
            assertNativeMissing(e, mode.toString());
            assertFalse(Files.exists(path), mode + " must not create the file");
        }
        Files.write(path, new byte[8192]);
        List<Executable> calls = List.of(
                () -> PageCache.residency(path),
                () -> PageCache.residency(path, 0, 4096),
                () -> PageCache.evict(path),
                () -> PageCache.touch(path),
                PageCache::pageSize);
        for (Executable call : calls) assertNativeMissing(assertThrows(UnsupportedOperationException.class, call), "PageCache");
        try (StorageFile file = StorageFile.open(path)) {
            assertNativeMissing(assertThrows(UnsupportedOperationException.class, () -> file.residency(0, 4096)),
                    "residency");
        }
    }

    private static void assertNativeMissing(UnsupportedOperationException e, String what) {
        String message = e.getMessage();
        assertTrue(message.contains("native library") && message.contains("not loaded"), what + ": " + message);
        assertTrue(message.contains("pagewise.native"), "the message carries the load error: " + message);
    }

    /** The same types, errno and messages as on the native path (ErrnoMappingTest), without the C library's names. */
    @Test
    void openFailuresAreTheJdkTypesWithTheErrnoAsOnTheNativePath() throws Exception {
        Path missing = dir.resolve("missing");
        NoSuchFileException noFile = assertThrows(NoSuchFileException.class, () -> StorageFile.open(missing));
        assertEquals("open " + missing + ": No such file or directory (ENOENT)", noFile.getMessage());
        SystemCallFailure failure = assertInstanceOf(SystemCallFailure.class, noFile);
        assertEquals(2, failure.errno());
        assertEquals("ENOENT", failure.errnoName());
        assertEquals(missing, failure.path());
        assertEquals(-1, failure.offset());
        assertEquals("open", failure.operation());

        Path existing = dir.resolve("existing");
        Files.write(existing, new byte[] {1});
        FileAlreadyExistsException exists = assertThrows(FileAlreadyExistsException.class,
                () -> StorageFile.open(existing, CacheMode.WRITEBACK, CREATE_NEW, WRITE));
        assertEquals("open " + existing + ": File exists (EEXIST)", exists.getMessage());
        assertEquals(17, ((SystemCallFailure) exists).errno());

        Path denied = Fixtures.deniedForWriting(dir);
        AccessDeniedException refused = assertThrows(AccessDeniedException.class,
                () -> StorageFile.open(denied, CacheMode.WRITEBACK, WRITE));
        assertEquals("open " + denied + ": Permission denied (EACCES)", refused.getMessage());
        assertEquals(13, ((SystemCallFailure) refused).errno());

        // An error the JDK has no type for keeps its errno, found from the C library's text the JDK reports.
        NativeIOException directory = assertThrows(NativeIOException.class,
                () -> StorageFile.open(dir, CacheMode.WRITEBACK, WRITE));
        assertEquals("open " + dir + ": Is a directory (EISDIR)", directory.getMessage());
        assertEquals(21, directory.errno());
        // EPERM is reported as the JDK reports it, a FileSystemException with the text; it is a refusal too.
        IOException eperm = io.pagewise.internal.Errno.openFailure(
                new java.nio.file.FileSystemException(existing.toString(), null, "Operation not permitted"), "open", existing);
        assertInstanceOf(AccessDeniedException.class, eperm);
        assertEquals("open " + existing + ": Operation not permitted (EPERM)", eperm.getMessage());
    }

    @Test
    void theFileChannelConventionsHoldOnThePureJavaPath() throws Exception {
        Path path = dir.resolve("conventions");
        byte[] data = Fixtures.random(9, 5000);
        Files.write(path, data);
        Object opened = StorageFile.open(path, CacheMode.WRITEBACK);
        java.nio.channels.Channel channel = assertInstanceOf(java.nio.channels.Channel.class, opened);
        StorageFile file = (StorageFile) opened;
        ByteBuffer across = ByteBuffer.allocate(3000);
        assertEquals(1000, file.read(across, 4000));
        assertEquals(1000, across.position());
        assertEquals(-1, file.read(across, 5000), "at the end: -1");
        assertEquals(-1, file.read(ByteBuffer.allocateDirect(10), 1 << 30), "past the end: -1");
        assertEquals(0, file.read(ByteBuffer.allocate(0), 1 << 30), "no room: 0");
        ByteBuffer whole = ByteBuffer.allocate(5000);
        file.readFully(whole, 0);
        assertArrayEquals(data, whole.array());
        assertThrows(java.io.EOFException.class, () -> file.readFully(ByteBuffer.allocate(10), 4995));
        channel.close();
        assertFalse(channel.isOpen());
    }

    /** As on the native path (InterruptsTest): FileChannel would close the file for every thread at one interrupt. */
    @ParameterizedTest
    @EnumSource(value = CacheMode.class, names = {"WRITEBACK", "WRITETHROUGH"})
    void anInterruptClosesNothingOnThePureJavaPath(CacheMode mode) throws Exception {
        Interrupts.assertAnInterruptClosesNothing(dir, mode);
    }

    @Test
    void errorsAreReportedAsOnTheNativePath() throws Exception {
        Path path = dir.resolve("errors");
        Files.write(path, new byte[100]);
        try (StorageFile file = StorageFile.open(path)) {
            assertFalse(file.isWritable());
            assertThrows(AccessDeniedException.class, () -> file.write(ByteBuffer.allocate(1), 0));
            assertThrows(AccessDeniedException.class, () -> file.zero(0, 1, true));
            assertThrows(AccessDeniedException.class, () -> file.trim(0, 1));
            assertThrows(AccessDeniedException.class, () -> file.resize(1));
            assertThrows(IllegalArgumentException.class, () -> file.read(ByteBuffer.allocate(1), -1));
            assertThrows(IllegalArgumentException.class, () -> file.read(ByteBuffer.allocateDirect(1).asReadOnlyBuffer(), 0));
        }
        StorageFile closed = StorageFile.open(path, CacheMode.UNSAFE, READ, WRITE);
        closed.close();
        closed.close();
        ClosedChannelException e = assertThrows(ClosedChannelException.class, () -> closed.read(ByteBuffer.allocate(1), 0));
        assertTrue(e.getMessage().contains(path.toString()), e.getMessage());
        assertThrows(ClosedChannelException.class, closed::flush);
        assertThrows(IllegalArgumentException.class,
                () -> StorageFile.open(path, CacheMode.WRITEBACK, java.nio.file.StandardOpenOption.APPEND, WRITE));
    }

    /** The NBD server and client, and the NBD errors they name, need no native library. */
    @Test
    void nbdServesAndNamesItsErrorsWithoutTheNativeLibrary() throws Exception {
        Path path = dir.resolve("served");
        byte[] data = new byte[1 << 16];
        new Random(7).nextBytes(data);
        Files.write(path, data);
        BlockDevice full = new BlockDevice() {
            @Override public long size() { return 1 << 16; }

            @Override public void readFully(ByteBuffer dst, long offset) { dst.put(data, (int) offset, dst.remaining()); }

            @Override
            public void write(ByteBuffer src, long offset, boolean fua) throws DeviceException {
                throw new DeviceException(DeviceException.ENOSPC, "full");
            }

            @Override public Capabilities capabilities() { return Capabilities.of(Capability.WRITE); }
        };
        try (FileDevice file = FileDevice.open(path, CacheMode.WRITEBACK, java.nio.file.StandardOpenOption.READ);
             NbdServer server = NbdServer.builder().export("", file).export("full", full)
                     .unixSocket(dir.resolve("nbd.sock")).start();
             NbdClient fromFile = NbdClient.connect(server.uri(""));
             NbdClient toFull = NbdClient.connect(server.uri("full"))) {
            ByteBuffer back = ByteBuffer.allocate(4096);
            fromFile.read(back, 8192);
            assertArrayEquals(Arrays.copyOfRange(data, 8192, 8192 + 4096), back.array());
            NbdException e = assertThrows(NbdException.class, () -> toFull.write(ByteBuffer.allocate(512), 0, false));
            assertEquals(NbdException.ENOSPC, e.error());
            // The reply names the operation, range and errno; the device's own text ("full") stays in the server's log.
            assertTrue(e.getMessage().contains("WRITE at 0 (+512) failed: ENOSPC (write at 0 (+512): No space left on device (ENOSPC))"),
                    e.getMessage());
            assertFalse(e.getMessage().contains("full)"), e.getMessage());
        }
    }

    @Test
    void theCliReportsTheMissingLibrary() throws Exception {
        String version = CommandRun.of("--version").assertOk().out();
        assertTrue(version.contains("not loaded") && version.contains("pagewise.native"), version);
        Path path = dir.resolve("cli");
        Files.write(path, new byte[4096]);
        CommandRun cachestats = CommandRun.command("cachestats", path.toString()).assertStatus(1);
        assertTrue(cachestats.err().contains("native library"), cachestats.err());
        assertEquals("", cachestats.out());
    }
}

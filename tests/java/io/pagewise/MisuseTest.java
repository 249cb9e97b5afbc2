package io.pagewise;

import static java.nio.file.StandardOpenOption.APPEND;
import static java.nio.file.StandardOpenOption.CREATE;
import static java.nio.file.StandardOpenOption.CREATE_NEW;
import static java.nio.file.StandardOpenOption.DELETE_ON_CLOSE;
import static java.nio.file.StandardOpenOption.DSYNC;
import static java.nio.file.StandardOpenOption.READ;
import static java.nio.file.StandardOpenOption.SYNC;
import static java.nio.file.StandardOpenOption.TRUNCATE_EXISTING;
import static java.nio.file.StandardOpenOption.WRITE;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.Fixtures.BufferKind;
import io.pagewise.system.NativeIOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Wrong use fails fast with the documented exception and changes nothing: bad ranges, writes to read-only files,
 * use after close, unsupported open options, read-only buffers.
 */
@Timeout(30)
class MisuseTest {
    @TempDir
    Path dir;

    private Path existing(String name, int size) throws Exception {
        Path path = dir.resolve(name);
        Files.write(path, Fixtures.random(size, size));
        return path;
    }

    @ParameterizedTest
    @EnumSource(CacheMode.class)
    void negativeOrOverflowingRangesAreIllegalArguments(CacheMode mode) throws Exception {
        Path path = existing("ranges", 8192);
        byte[] before = Files.readAllBytes(path);
        try (StorageFile file = StorageFile.open(path, mode, READ, WRITE)) {
            Map<String, Executable> calls = new LinkedHashMap<>();
            calls.put("read", () -> file.read(ByteBuffer.allocate(10), -1));
            calls.put("write", () -> file.write(ByteBuffer.allocate(10), -1));
            calls.put("write fua", () -> file.write(ByteBuffer.allocate(10), -4096, true));
            calls.put("write overflow", () -> file.write(ByteBuffer.allocate(10), Long.MAX_VALUE - 5));
            calls.put("advise offset", () -> file.advise(-1, 10, AccessHint.WILLNEED));
            calls.put("advise length", () -> file.advise(0, -10, AccessHint.DONTNEED));
            calls.put("prefetch", () -> file.prefetch(0, -1));
            calls.put("evict", () -> file.evict(-1, 0));
            calls.put("zero offset", () -> file.zero(-1, 10, true));
            calls.put("zero length", () -> file.zero(0, -10, false));
            calls.put("zero overflow", () -> file.zero(Long.MAX_VALUE, 1, false));
            calls.put("trim", () -> file.trim(10, -1));
            calls.put("extents", () -> file.extents(-5, 10));
            calls.put("extents length", () -> file.extents(0, -1));
            calls.put("resize", () -> file.resize(-1));
            calls.put("residency", () -> file.residency(-1, 10));
            calls.put("residency length", () -> file.residency(0, -10));
            for (Map.Entry<String, Executable> call : calls.entrySet()) {
                IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call.getValue(), call.getKey());
                assertTrue(e.getMessage().contains("negative") || e.getMessage().contains("overflow"), e.getMessage());
            }
            assertEquals(opened(mode), file.stats(), "nothing was done");
            assertTrue(file.isOpen());
        }
        assertArrayEquals(before, Files.readAllBytes(path));
        assertThrows(IllegalArgumentException.class, () -> PageCache.residency(path, -1, 4096));
        assertThrows(IllegalArgumentException.class, () -> PageCache.residency(path, 0, -4096));
    }

    @ParameterizedTest
    @EnumSource(CacheMode.class)
    void changingAReadOnlyFileIsAccessDenied(CacheMode mode) throws Exception {
        Path path = existing("read-only", 10_000);
        byte[] before = Files.readAllBytes(path);
        try (StorageFile file = StorageFile.open(path, mode)) {
            assertFalse(file.isWritable());
            Map<String, Executable> calls = new LinkedHashMap<>();
            calls.put("write", () -> file.write(ByteBuffer.allocate(10), 0));
            calls.put("write fua", () -> file.write(ByteBuffer.allocateDirect(4096), 4096, true));
            calls.put("zero", () -> file.zero(0, 100, false));
            calls.put("zero trim", () -> file.zero(0, 4096, true));
            calls.put("trim", () -> file.trim(0, 4096));
            calls.put("resize", () -> file.resize(5));
            calls.put("allocate", () -> file.allocate(0, 1 << 20));
            for (Map.Entry<String, Executable> call : calls.entrySet()) {
                AccessDeniedException e = assertThrows(AccessDeniedException.class, call.getValue(), call.getKey());
                assertEquals(path.toString(), e.getFile());
                assertTrue(e.getMessage().contains("read-only"), e.getMessage());
            }
            // Reading, flushing and hints are fine on a read-only file.
            assertArrayEquals(before, Fixtures.readFully(file, 0, before.length));
            file.flush();
            file.advise(AccessHint.SEQUENTIAL);
            file.prefetch(0, 4096);
            file.evict();
        }
        assertArrayEquals(before, Files.readAllBytes(path));
    }

    @Test
    void writesToAClosedReadOnlyFileSayItIsClosed() throws Exception {
        Path path = existing("closed-ro", 8192);
        StorageFile file = StorageFile.open(path, CacheMode.WRITEBACK);
        assertThrows(AccessDeniedException.class, () -> file.write(ByteBuffer.allocate(10), 0), "open: read-only");
        // Its channel view answers as a FileChannel opened for reading does.
        java.nio.channels.SeekableByteChannel view = file.channel();
        assertThrows(java.nio.channels.NonWritableChannelException.class, () -> view.write(ByteBuffer.allocate(10)));
        assertThrows(java.nio.channels.NonWritableChannelException.class, () -> view.truncate(0));
        file.close();
        Map<String, Executable> calls = new LinkedHashMap<>();
        calls.put("write", () -> file.write(ByteBuffer.allocate(10), 0));
        calls.put("zero", () -> file.zero(0, 4096, false));
        calls.put("trim", () -> file.trim(0, 4096));
        calls.put("resize", () -> file.resize(100));
        for (Map.Entry<String, Executable> call : calls.entrySet()) {
            ClosedChannelException e = assertThrows(ClosedChannelException.class, call.getValue(), call.getKey());
            assertTrue(e.getMessage().contains(path.toString()), call.getKey() + ": " + e.getMessage());
        }
    }

    @ParameterizedTest
    @EnumSource(CacheMode.class)
    void everyUseAfterCloseIsAClosedChannelNamingThePath(CacheMode mode) throws Exception {
        Path path = existing("closed", 10_000);
        byte[] before = Files.readAllBytes(path);
        StorageFile file = StorageFile.open(path, mode, READ, WRITE);
        file.close();
        assertFalse(file.isOpen());
        Map<String, Executable> calls = new LinkedHashMap<>();
        calls.put("read", () -> file.read(ByteBuffer.allocate(10), 0));
        calls.put("empty read", () -> file.read(ByteBuffer.allocate(0), 0));
        calls.put("write", () -> file.write(ByteBuffer.allocate(10), 0));
        calls.put("empty write", () -> file.write(ByteBuffer.allocate(0), 0));
        calls.put("write fua", () -> file.write(ByteBuffer.allocateDirect(10), 0, true));
        calls.put("flush", file::flush);
        calls.put("advise", () -> file.advise(AccessHint.RANDOM));
        calls.put("advise range", () -> file.advise(0, 4096, AccessHint.WILLNEED));
        calls.put("prefetch", () -> file.prefetch(0, 4096));
        calls.put("empty prefetch", () -> file.prefetch(0, 0));
        calls.put("evict", () -> file.evict(0, 4096));
        calls.put("empty evict", () -> file.evict(0, 0));
        calls.put("empty advise", () -> file.advise(0, 0, AccessHint.RANDOM));
        calls.put("zero", () -> file.zero(0, 4096, true));
        calls.put("empty zero", () -> file.zero(0, 0, false));
        calls.put("trim", () -> file.trim(0, 4096));
        calls.put("empty trim", () -> file.trim(0, 0));
        calls.put("extents", () -> file.extents(0, 4096));
        calls.put("size", file::size);
        calls.put("resize", () -> file.resize(100));
        calls.put("residency", () -> file.residency(0, 4096));
        for (Map.Entry<String, Executable> call : calls.entrySet()) {
            ClosedChannelException e = assertThrows(ClosedChannelException.class, call.getValue(), call.getKey());
            assertTrue(e.getMessage() != null && e.getMessage().contains(path.toString()),
                    call.getKey() + ": " + e.getMessage());
        }
        file.close(); // a second close is fine
        file.close();
        assertEquals(opened(mode), file.stats(), "nothing was done after close");
        assertArrayEquals(before, Files.readAllBytes(path));
    }

    /**
     * Offsets near Long.MAX_VALUE are legal arguments but no file gets that large: the kernel (or, where the
     * block-aligned span would overflow a long, the library) must refuse with a NativeIOException, and reads there
     * are past the end of file. Nothing may fail with an overflow inside the library.
     */
    @ParameterizedTest
    @EnumSource(CacheMode.class)
    void offsetsNearTheLargestLongFailCleanly(CacheMode mode) throws Exception {
        Path path = existing("huge", 100);
        long[] offsets = {Long.MAX_VALUE - 10, Long.MAX_VALUE - 20, Long.MAX_VALUE - 4096, Long.MAX_VALUE - (1 << 20) + 7};
        try (StorageFile file = StorageFile.open(path, mode, READ, WRITE)) {
            for (long offset : offsets) {
                for (BufferKind kind : new BufferKind[] {BufferKind.HEAP, BufferKind.DIRECT}) {
                    byte[] data = Fixtures.random(offset, 10);
                    try {
                        Fixtures.write(file, offset, data, kind);
                        // Some filesystems take files this large (sparse): then the data must be there.
                        Fixtures.assertBytes(data, Fixtures.read(file, offset, 10, kind), "written at " + offset);
                    } catch (NativeIOException e) {
                        assertTrue(e.errnoName().equals("EFBIG") || e.errnoName().equals("EINVAL"), e.getMessage());
                    }
                    assertEquals(0, Fixtures.read(file, Long.MAX_VALUE - 5, 5, kind).length, "read at the end of the range");
                }
            }
            long near = Long.MAX_VALUE - 100;
            List<Executable> others = List.of(
                    () -> file.prefetch(near, 50), () -> file.evict(near, 100), () -> file.advise(near, 100, AccessHint.WILLNEED),
                    () -> file.advise(near, 100, AccessHint.DONTNEED), () -> file.trim(near, 100),
                    () -> file.zero(near, 100, true), () -> file.zero(near, 100, false), () -> file.residency(near, 100));
            for (Executable other : others) {
                try {
                    other.execute();
                } catch (NativeIOException e) {
                    assertTrue(e.errnoName().equals("EFBIG") || e.errnoName().equals("EINVAL"), e.getMessage());
                } catch (Throwable e) {
                    throw new AssertionError(mode + ": unexpected " + e, e);
                }
            }
            assertEquals(List.of(), file.extents(near, 100));
            assertEquals(100, file.size(), "nothing was written");
        }
        if (mode.isDirect()) {
            try (StorageFile file = StorageFile.open(path, mode, READ, WRITE)) {
                NativeIOException e = assertThrows(NativeIOException.class,
                        () -> file.write(ByteBuffer.allocate(10), Long.MAX_VALUE - 10));
                assertEquals("pwritev " + path + " at " + (Long.MAX_VALUE - 10) + " (+10): File too large (EFBIG)",
                        e.getMessage());
            }
        }
    }

    @Test
    void unsupportedOpenOptionsAreIllegalArgumentsAndCreateNothing() throws Exception {
        Path path = dir.resolve("never");
        Map<String, OpenOption[]> cases = new LinkedHashMap<>();
        cases.put("APPEND", new OpenOption[] {APPEND, CREATE, WRITE});
        cases.put("DSYNC", new OpenOption[] {DSYNC, CREATE, WRITE});
        cases.put("SYNC", new OpenOption[] {SYNC, CREATE, WRITE});
        cases.put("DELETE_ON_CLOSE", new OpenOption[] {DELETE_ON_CLOSE, CREATE, WRITE});
        cases.put("NOFOLLOW_LINKS", new OpenOption[] {LinkOption.NOFOLLOW_LINKS, CREATE, WRITE});
        cases.put("CREATE without WRITE", new OpenOption[] {CREATE});
        cases.put("CREATE_NEW without WRITE", new OpenOption[] {CREATE_NEW, READ});
        cases.put("TRUNCATE_EXISTING without WRITE", new OpenOption[] {TRUNCATE_EXISTING});
        for (CacheMode mode : CacheMode.values()) {
            for (Map.Entry<String, OpenOption[]> c : cases.entrySet()) {
                IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                        () -> StorageFile.open(path, mode, c.getValue()), mode + " " + c.getKey());
                assertTrue(e.getMessage().contains(c.getKey().split(" ")[0]), e.getMessage());
                assertFalse(Files.exists(path), c.getKey() + " must not create the file");
            }
        }
        IllegalArgumentException dsync = assertThrows(IllegalArgumentException.class,
                () -> StorageFile.open(path, CacheMode.WRITEBACK, DSYNC, WRITE));
        assertTrue(dsync.getMessage().contains("WRITETHROUGH"), "points to the mode to use: " + dsync.getMessage());
        assertThrows(NullPointerException.class, () -> StorageFile.open(null, CacheMode.WRITEBACK));
        assertThrows(NullPointerException.class, () -> StorageFile.open(path, (CacheMode) null));
    }

    @ParameterizedTest
    @EnumSource(CacheMode.class)
    void readingIntoAReadOnlyBufferIsRefusedAndWritingFromOneWorks(CacheMode mode) throws Exception {
        Path path = existing("buffers", 9000);
        byte[] content = Files.readAllBytes(path);
        try (StorageFile file = StorageFile.open(path, mode, READ, WRITE)) {
            for (BufferKind kind : BufferKind.values()) {
                ByteBuffer target = Fixtures.empty(kind, 5000).asReadOnlyBuffer();
                ByteBuffer probe = target.duplicate();
                assertThrows(IllegalArgumentException.class, () -> file.read(target, 100), kind.toString());
                for (int i = probe.position(); i < probe.limit(); i++) {
                    assertEquals(0x5A, probe.get(i), kind + ": a refused read must not fill the buffer");
                }
                byte[] data = Fixtures.random(kind.ordinal(), 3001);
                ByteBuffer source = Fixtures.source(kind, data).asReadOnlyBuffer();
                file.write(source, 1000 + kind.ordinal() * 7);
                assertFalse(source.hasRemaining());
                System.arraycopy(data, 0, content, 1000 + kind.ordinal() * 7, data.length);
            }
            Fixtures.assertBytes(content, Fixtures.readFully(file, 0, content.length), "content");
        }
    }

    /** The stats of a file just opened: nothing, except the one-byte RWF_DONTCACHE probe of a non-empty file. */
    private static IoStats opened(CacheMode mode) {
        int probe = mode == CacheMode.DONTCACHE ? 1 : 0;
        return new IoStats(0, 0, 0, 0, 0, 0, 0, 0, 0, probe, probe, 0, 0, 0);
    }
}

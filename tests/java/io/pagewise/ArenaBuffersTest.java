package io.pagewise;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Buffers over an Arena's memory (JDK 22+; tag ffm, run by the FFM suite): one whose arena is closed, or that is
 * confined to another thread, is refused as FileChannel refuses it, instead of the kernel writing freed memory.
 * The test sources are built for release 17, so the arenas are made by reflection.
 */
@Tag("ffm")
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ArenaBuffersTest {
    @TempDir
    Path dir;

    @ParameterizedTest
    @EnumSource(value = CacheMode.class, names = {"WRITEBACK", "DIRECT", "EVICT"})
    void aBufferOfAClosedOrAnotherThreadsArenaIsRefused(CacheMode mode) throws Exception {
        Path path = dir.resolve("arena.raw");
        Files.write(path, new byte[8192]);
        try (StorageFile file = StorageFile.open(path, mode, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            AutoCloseable arena = arena("ofConfined");
            ByteBuffer freed = buffer(arena);
            arena.close();
            IllegalStateException closed = assertThrows(IllegalStateException.class, () -> file.read(freed, 0));
            assertTrue(closed.getMessage().contains("Already closed"), closed.getMessage());
            assertThrows(IllegalStateException.class, () -> file.write(freed, 0));

            ByteBuffer theirs = CompletableFuture.supplyAsync(() -> {
                try {
                    return buffer(arena("ofConfined")); // confined to that thread, left open
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }).get(10, TimeUnit.SECONDS);
            RuntimeException wrong = assertThrows(RuntimeException.class, () -> file.read(theirs, 0));
            assertEquals("java.lang.WrongThreadException", wrong.getClass().getName());

            try (AutoCloseable mine = arena("ofConfined")) {
                ByteBuffer ok = buffer(mine);
                assertEquals(4096, file.read(ok, 0), "a live buffer of this thread's arena works");
            }
        }
    }

    private static AutoCloseable arena(String factory) throws Exception {
        return (AutoCloseable) Class.forName("java.lang.foreign.Arena").getMethod(factory).invoke(null);
    }

    /** 4096 bytes, 4096 aligned, of the arena's memory, as a ByteBuffer. */
    private static ByteBuffer buffer(AutoCloseable arena) throws Exception {
        Object segment = Class.forName("java.lang.foreign.SegmentAllocator").getMethod("allocate", long.class, long.class)
                .invoke(arena, 4096L, 4096L);
        return (ByteBuffer) Class.forName("java.lang.foreign.MemorySegment").getMethod("asByteBuffer").invoke(segment);
    }
}

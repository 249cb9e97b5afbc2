package io.pagewise;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.backends.ImageFormat;
import io.pagewise.backup.DirtyBitmap;
import io.pagewise.system.NativeIOException;
import io.pagewise.testing.ExternalTools;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;

/**
 * A directory, a named pipe or a socket where a file is expected is refused at once, with the path and what it is:
 * opening a pipe nobody writes used to block forever, and a directory failed later with an errno naming no path.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class NotAFileTest {
    @TempDir
    Path dir;

    private Path fifo() throws Exception {
        Path fifo = dir.resolve("fifo");
        ExternalTools.run(10, "mkfifo", fifo.toString()).assertOk("mkfifo " + fifo);
        return fifo;
    }

    private static void refused(Path path, String what, Executable open) {
        NativeIOException e = assertThrows(NativeIOException.class, open, path + " was not refused");
        assertEquals(path, e.path(), e.getMessage());
        assertEquals("open", e.operation());
        assertTrue(e.getMessage().startsWith("open " + path + ": " + what + " ("), e.getMessage());
    }

    @Test
    void aNamedPipeIsRefusedEverywhereInsteadOfBlocking() throws Exception {
        Path fifo = fifo();
        String what = "is a pipe (FIFO), which cannot be read or written at an offset";
        // ESPIPE: what a read at an offset of a pipe fails with
        for (CacheMode mode : CacheMode.values()) {
            if (mode.isAvailable()) refused(fifo, what, () -> StorageFile.open(fifo, mode).close());
        }
        refused(fifo, what, () -> StorageFile.open(fifo, CacheMode.WRITEBACK, StandardOpenOption.READ,
                StandardOpenOption.WRITE).close());
        refused(fifo, what, () -> ImageFormat.detect(fifo));
        if (Native.isAvailable()) {
            refused(fifo, what, () -> PageCache.residency(fifo));
            refused(fifo, what, () -> PageCache.evict(fifo));
        }
        if (Native.isAvailable()) refused(fifo, what, () -> PageCache.cacheState(fifo));
        refused(fifo, what, () -> DirtyBitmap.open(fifo, "b", null, 1 << 20, 65536).close());
    }

    @Test
    void aDirectoryIsRefusedWithItsName() throws Exception {
        Path sub = Files.createDirectory(dir.resolve("sub"));
        refused(sub, "Is a directory", () -> StorageFile.open(sub, CacheMode.WRITEBACK).close());
        refused(sub, "Is a directory", () -> StorageFile.open(sub, CacheMode.WRITEBACK, StandardOpenOption.READ,
                StandardOpenOption.WRITE, StandardOpenOption.CREATE).close());
        refused(sub, "Is a directory", () -> ImageFormat.detect(sub));
        if (Native.isAvailable()) {
            refused(sub, "Is a directory", () -> PageCache.cacheState(sub));
            refused(sub, "Is a directory", () -> PageCache.residency(sub));
        }
    }

    @Test
    void aSocketIsRefused() throws Exception {
        Path socket = dir.resolve("socket");
        try (ServerSocketChannel listening = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            listening.bind(UnixDomainSocketAddress.of(socket));
            refused(socket, "is a socket", () -> StorageFile.open(socket, CacheMode.WRITEBACK).close());
        }
    }

    @Test
    void filesAndCharacterDevicesStillOpen() throws Exception {
        Path file = Files.write(dir.resolve("file"), new byte[4096]);
        StorageFile.open(file, CacheMode.WRITEBACK).close();
        StorageFile.open(Path.of("/dev/zero"), CacheMode.WRITEBACK).close();
        // A path that does not exist yet is created, not refused.
        StorageFile.open(dir.resolve("new"), CacheMode.WRITEBACK, StandardOpenOption.READ, StandardOpenOption.WRITE,
                StandardOpenOption.CREATE).close();
    }
}

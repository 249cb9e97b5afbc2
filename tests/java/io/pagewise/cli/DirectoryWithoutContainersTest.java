package io.pagewise.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.pagewise.CacheMode;
import io.pagewise.backends.FileDevice;
import io.pagewise.nbd.server.DirectoryExports;
import io.pagewise.nbd.server.ExportEntry;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * serve --dir without --force-raw serves the directory through {@link ServeDevices.WithoutContainers}, which must pass
 * a client's release on: the directory closes a replaced file's device once its last client has gone, and without
 * the release every replaced or deleted file stayed open (its descriptor and disk space) until the server stopped.
 */
@Timeout(30)
class DirectoryWithoutContainersTest {
    @TempDir
    Path dir;

    @Test
    void aReplacedFilesDeviceIsClosedWhenItsClientReleasesIt() throws Exception {
        Path vm = sized(dir.resolve("vm.img"), 1 << 20);
        try (DirectoryExports directory = DirectoryExports.of(dir,
                file -> FileDevice.open(file, CacheMode.WRITEBACK, StandardOpenOption.READ))) {
            ServeDevices.WithoutContainers served = new ServeDevices.WithoutContainers(directory);
            ExportEntry first = served.find("vm.img");
            Path next = sized(dir.resolve(".next"), 2 << 20);
            Files.move(next, vm, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            ExportEntry second = served.find("vm.img");
            assertEquals(2 << 20, second.device().size(), "the replaced file is opened anew");
            assertEquals(1 << 20, first.device().size(), "the old one stays open while its client has it");
            served.released(first);
            assertThrows(ClosedChannelException.class, () -> first.device().readFully(ByteBuffer.allocate(512), 0),
                    "closed once its last client released it");
            served.released(second);
        }
    }

    private static Path sized(Path file, long size) throws Exception {
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
            raf.setLength(size);
        }
        return file;
    }
}

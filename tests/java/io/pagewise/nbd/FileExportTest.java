package io.pagewise.nbd;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.CacheMode;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** READ looks for holes only while the file may have some: fully written files skip the lookups. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class FileExportTest {
    @TempDir
    Path dir;

    @Test
    void fullyWrittenFileHasNoHolesUntilTrimmedOrZeroed() throws IOException {
        Path path = dir.resolve("full.raw");
        Files.write(path, new byte[1 << 20]);
        try (FileExport export = FileExport.open(path, CacheMode.WRITEBACK, false)) {
            assertFalse(export.mayHaveHoles(), "a fully written file has no holes");
            export.trim(0, 65536, false);
            assertTrue(export.mayHaveHoles(), "TRIM may punch a hole");
        }
        try (FileExport export = FileExport.open(path, CacheMode.WRITEBACK, false)) {
            assertTrue(export.mayHaveHoles(), "the punched hole is found at open");
        }
        Path other = dir.resolve("zeroed.raw");
        Files.write(other, new byte[1 << 20]);
        try (FileExport export = FileExport.open(other, CacheMode.WRITEBACK, false)) {
            export.zero(0, 65536, true, false, false);
            assertTrue(export.mayHaveHoles(), "zeroing may punch a hole");
        }
    }

    @Test
    void sparseFileMayHaveHoles() throws IOException {
        Path path = dir.resolve("sparse.raw");
        try (RandomAccessFile raf = new RandomAccessFile(path.toFile(), "rw")) {
            raf.setLength(64L << 20);
            raf.seek(32L << 20);
            raf.write(1);
        }
        try (FileExport export = FileExport.open(path, CacheMode.WRITEBACK, true)) {
            assertTrue(export.mayHaveHoles());
        }
    }
}

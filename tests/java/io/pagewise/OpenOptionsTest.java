package io.pagewise;

import static java.nio.file.StandardOpenOption.CREATE;
import static java.nio.file.StandardOpenOption.CREATE_NEW;
import static java.nio.file.StandardOpenOption.READ;
import static java.nio.file.StandardOpenOption.SPARSE;
import static java.nio.file.StandardOpenOption.TRUNCATE_EXISTING;
import static java.nio.file.StandardOpenOption.WRITE;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.Fixtures.BufferKind;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.util.Set;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** The supported open options do what StandardOpenOption says, in every mode. */
@Timeout(30)
class OpenOptionsTest {
    @TempDir
    Path dir;

    @ParameterizedTest
    @EnumSource(CacheMode.class)
    void supportedOptionsBehaveAsDocumented(CacheMode mode) throws Exception {
        Path path = dir.resolve("options");
        byte[] content = Fixtures.random(1, 5000);

        try (StorageFile file = StorageFile.open(path, mode, CREATE_NEW, WRITE, SPARSE)) {
            assertEquals(0, file.size(), "CREATE_NEW makes an empty file");
            assertTrue(file.isWritable());
            Fixtures.write(file, 0, content, BufferKind.HEAP);
        }
        Set<PosixFilePermission> permissions = Files.getPosixFilePermissions(path);
        assertTrue(Set.of(PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE, PosixFilePermission.GROUP_READ,
                PosixFilePermission.OTHERS_READ).containsAll(permissions), "at most rw-r--r--: " + permissions);
        assertTrue(permissions.contains(PosixFilePermission.OWNER_WRITE), "owner can write: " + permissions);

        try (StorageFile file = StorageFile.open(path, mode, CREATE, WRITE)) {
            assertEquals(content.length, file.size(), "CREATE keeps an existing file");
        }
        try (StorageFile file = StorageFile.open(path, mode)) {
            assertFalse(file.isWritable(), "no options: read-only");
            assertEquals(mode, file.requestedMode());
            assertArrayEquals(content, Fixtures.readFully(file, 0, content.length));
        }
        try (StorageFile file = StorageFile.open(path, mode, READ)) {
            assertFalse(file.isWritable());
        }
        try (StorageFile file = StorageFile.open(path, mode, WRITE, TRUNCATE_EXISTING)) {
            assertEquals(0, file.size(), "TRUNCATE_EXISTING empties the file");
            Fixtures.write(file, 3, new byte[] {7}, BufferKind.DIRECT);
            assertArrayEquals(new byte[] {0, 0, 0, 7}, Fixtures.read(file, 0, 100, BufferKind.HEAP));
        }
        assertEquals(4, Files.size(path));
        Path created = dir.resolve("created");
        try (StorageFile file = StorageFile.open(created, mode, CREATE, READ, WRITE)) {
            assertEquals(created, file.path());
            assertEquals(0, file.size(), "CREATE makes a missing file");
        }
        assertTrue(Files.isRegularFile(created));
    }
}

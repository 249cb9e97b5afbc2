package io.pagewise;

import static java.nio.file.StandardOpenOption.CREATE;
import static java.nio.file.StandardOpenOption.CREATE_NEW;
import static java.nio.file.StandardOpenOption.READ;
import static java.nio.file.StandardOpenOption.WRITE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.internal.Errno;
import io.pagewise.system.NativeIOException;
import io.pagewise.system.SystemCallFailure;
import io.pagewise.testing.ExternalTools;
import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.ByteBuffer;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Failed system calls become {@link SystemCallFailure}s whose message and accessors name the operation, the path,
 * the range and the errno, and whose errno is the one the kernel gave: the JDK's exception types where it has one,
 * else {@link NativeIOException}. ({@code FallbackPathTest} checks the same exceptions on the pure-Java path.)
 */
@Timeout(30)
class ErrnoMappingTest {
    private static final Path DEV_FULL = Path.of("/dev/full");

    @TempDir
    Path dir;

    @Test
    @Tag("jni")
    void errnoNamesAreReadAtClassInitNotOnTheFailingPath() throws Exception {
        if (!Native.isAvailable()) ExternalTools.unavailable("native library not loaded", "errno names come from it");
        // The JVM logs each native method the first time it links it: Errno's must all come before the failure.
        java.util.List<String> command = java.util.List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xlog:jni+resolve=debug:stdout",
                "-cp", classes(Native.class) + java.io.File.pathSeparator + classes(ErrnoProbe.class),
                ErrnoProbe.class.getName(), dir.toString());
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        process.getOutputStream().close();
        String output = new String(process.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        assertTrue(process.waitFor(60, java.util.concurrent.TimeUnit.SECONDS), "child JVM did not finish");
        assertEquals(0, process.exitValue(), output);
        java.util.List<String> lines = java.util.List.of(output.split("\n"));
        assertTrue(lines.contains("available=true") && lines.contains("failed=ENOENT"), output);
        int opened = lines.indexOf("opened");
        for (String method : new String[] {"io.pagewise.internal.ErrnoTexts.description0"}) {
            int linked = -1;
            for (int i = 0; i < lines.size(); i++) if (lines.get(i).contains(method + "]")) linked = i;
            assertTrue(linked >= 0 && linked < opened, method + " must be linked at class init, before the first failure:\n"
                    + output.lines().filter(l -> l.contains("pagewise") || !l.startsWith("[")).collect(
                            java.util.stream.Collectors.joining("\n")));
        }
    }

    private static String classes(Class<?> type) throws Exception {
        return Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
    }

    @Test
    void writingToDevFullReportsEnospcWithOperationPathAndRange() throws Exception {
        try (StorageFile file = StorageFile.open(DEV_FULL, WRITE)) {
            NativeIOException e = assertThrows(NativeIOException.class,
                    () -> file.write(ByteBuffer.wrap(new byte[4096]), 0));
            assertEquals("pwritev /dev/full at 0 (+4096): No space left on device (ENOSPC)", e.getMessage());
            assertEquals(28, e.errno());
            assertEquals("ENOSPC", e.errnoName());
            assertEquals("pwritev", e.operation());
            assertEquals(DEV_FULL, e.path());
            assertEquals(0, e.offset());
            assertEquals(4096, e.length());

            NativeIOException at = assertThrows(NativeIOException.class,
                    () -> file.write(ByteBuffer.allocateDirect(100), 8192));
            assertEquals("pwritev /dev/full at 8192 (+100): No space left on device (ENOSPC)", at.getMessage());
            assertEquals(8192, at.offset());
            assertEquals(100, at.length());
            assertEquals(0, file.stats().writes());
        }
    }

    /** A call without a length (ftruncate's size is its offset) prints no "(+0)". */
    @Test
    void aFailedResizeNamesTheSizeWithoutALength() throws Exception {
        try (StorageFile file = StorageFile.open(DEV_FULL, WRITE)) {
            NativeIOException e = assertThrows(NativeIOException.class, () -> file.resize(4096));
            assertEquals("ftruncate /dev/full at 4096: Invalid argument (EINVAL)", e.getMessage());
            assertEquals(4096, e.offset());
            assertEquals(0, e.length());
        }
    }

    /** DONTCACHE is refused by /dev/full (EOPNOTSUPP) and falls back to EVICT, which then meets ENOSPC. */
    @ParameterizedTest
    @EnumSource(value = CacheMode.class, names = {"WRITEBACK", "UNSAFE", "EVICT", "DONTCACHE"})
    void everyBufferedModeReportsEnospc(CacheMode mode) throws Exception {
        try (StorageFile file = StorageFile.open(DEV_FULL, mode, WRITE)) {
            NativeIOException e = assertThrows(NativeIOException.class,
                    () -> file.write(ByteBuffer.wrap(new byte[777]), 4096));
            assertEquals(Errno.ENOSPC, e.errno());
            assertEquals("pwritev /dev/full at 4096 (+777): No space left on device (ENOSPC)", e.getMessage());
        }
    }

    @Test
    void openingAMissingFileIsNoSuchFileExceptionWithEnoent() throws Exception {
        assertTrue(Native.isAvailable(), "this test is about the native path: " + Native.loadError());
        Path missing = dir.resolve("missing");
        for (CacheMode mode : CacheMode.values()) {
            NoSuchFileException e = assertThrows(NoSuchFileException.class, () -> StorageFile.open(missing, mode, READ, WRITE));
            SystemCallFailure failure = assertInstanceOf(SystemCallFailure.class, e, "the errno is a value");
            assertEquals(Errno.ENOENT, failure.errno(), mode.toString());
            assertEquals("ENOENT", failure.errnoName());
            assertEquals(missing, failure.path());
            assertEquals(missing.toString(), e.getFile(), "the JDK's accessor names the file too");
            assertEquals(-1, failure.offset(), "open has no range");
            assertTrue(failure.operation().startsWith("open"), failure.operation());
            assertTrue(e.getMessage().startsWith("open"), e.getMessage());
            assertTrue(e.getMessage().endsWith(missing + ": No such file or directory (ENOENT)"), e.getMessage());
        }
        NoSuchFileException noParent = assertThrows(NoSuchFileException.class,
                () -> StorageFile.open(dir.resolve("no-dir/file"), CacheMode.WRITEBACK, CREATE, WRITE));
        assertEquals("ENOENT", ((SystemCallFailure) noParent).errnoName());
        assertFalse(Files.exists(missing));
        NoSuchFileException residency = assertThrows(NoSuchFileException.class, () -> PageCache.residency(missing));
        assertEquals("open " + missing + ": No such file or directory (ENOENT)", residency.getMessage());
        assertThrows(NoSuchFileException.class, () -> PageCache.evict(missing));
    }

    @Test
    void createNewOnAnExistingFileIsFileAlreadyExistsExceptionWithEexist() throws Exception {
        Path path = dir.resolve("exists");
        Files.write(path, new byte[] {1, 2, 3});
        FileAlreadyExistsException e = assertThrows(FileAlreadyExistsException.class,
                () -> StorageFile.open(path, CacheMode.WRITEBACK, CREATE_NEW, WRITE));
        assertEquals("open " + path + ": File exists (EEXIST)", e.getMessage());
        assertEquals(17, ((SystemCallFailure) e).errno());
        assertEquals(3, Files.size(path), "the existing file is left alone");
    }

    /** EACCES, for root too: a read-only sysfs attribute, or a file without permissions when not root. */
    @Test
    void openingWithoutPermissionIsAccessDeniedExceptionWithEacces() throws Exception {
        Path denied = Fixtures.deniedForWriting(dir);
        AccessDeniedException e = assertThrows(AccessDeniedException.class,
                () -> StorageFile.open(denied, CacheMode.WRITEBACK, WRITE));
        SystemCallFailure failure = assertInstanceOf(SystemCallFailure.class, e);
        assertEquals(Errno.EACCES, failure.errno());
        assertEquals("open " + denied + ": Permission denied (EACCES)", e.getMessage());
    }

    /** EPERM (an immutable file, for one) is a refusal too; the kernel cannot be made to give it to every user. */
    @Test
    void epermOnOpenIsAccessDeniedException() {
        Path path = Path.of("/data/immutable.img");
        IOException e = Errno.openFailure(-Errno.EPERM, "open", path);
        assertInstanceOf(AccessDeniedException.class, e);
        assertEquals("open /data/immutable.img: Operation not permitted (EPERM)", e.getMessage());
        assertEquals(Errno.EPERM, ((SystemCallFailure) e).errno());
        assertInstanceOf(NativeIOException.class, Errno.openFailure(-Errno.EROFS, "open", path), "no JDK type for EROFS");
    }

    @Test
    void directoriesReportEisdir() throws Exception {
        NativeIOException open = assertThrows(NativeIOException.class,
                () -> StorageFile.open(dir, CacheMode.WRITEBACK, WRITE));
        assertEquals("EISDIR", open.errnoName());
        // Read-only too, at open rather than at the first read (the system would open it).
        NativeIOException readOnly = assertThrows(NativeIOException.class, () -> StorageFile.open(dir));
        assertEquals("open " + dir + ": Is a directory (EISDIR)", readOnly.getMessage());
        assertEquals(21, readOnly.errno());
        assertEquals(dir, readOnly.path());
    }

    @ParameterizedTest
    @EnumSource(value = CacheMode.class, names = {"DIRECT", "DIRECTSYNC"})
    void oDirectWhereItCannotBeUsedSaysSo(CacheMode mode) throws Exception {
        for (Path path : new Path[] {Path.of("/proc/self/status"), DEV_FULL}) {
            NativeIOException e = assertThrows(NativeIOException.class, () -> StorageFile.open(path, mode));
            assertEquals(Errno.EINVAL, e.errno());
            assertEquals("EINVAL", e.errnoName());
            assertTrue(e.getMessage().contains("O_DIRECT"), e.getMessage());
            assertTrue(e.getMessage().contains(path.toString()), e.getMessage());
            assertTrue(e.getMessage().endsWith("Invalid argument (EINVAL)"), e.getMessage());
        }
    }
}

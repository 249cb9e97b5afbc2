package io.pagewise.nbd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.CacheMode;
import io.pagewise.backends.FileDevice;
import io.pagewise.backends.MemoryDevice;
import io.pagewise.nbd.server.DirectoryExports;
import io.pagewise.nbd.server.NbdServer;
import io.pagewise.testing.ExternalTools;
import io.pagewise.testing.RecordingLogger;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Several exports, a directory of exports and a default export, as nbdinfo and qemu-img see them. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class MultipleExportsTest {
    private final RecordingLogger log = new RecordingLogger("[server] ", System.Logger.Level.INFO);

    @TempDir
    Path dir;

    private static void sized(Path file, long size) throws Exception {
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
            raf.setLength(size);
        }
    }

    @Test
    void nbdinfoListsEveryExportWithSizeAndDescription() throws Exception {
        ExternalTools.require("nbdinfo");
        try (MemoryDevice a = new MemoryDevice(1 << 20); MemoryDevice b = new MemoryDevice(3 << 20);
             NbdServer server = NbdServer.builder().export("vm1", "first disk", a).export("vm2", "second disk", b)
                     .unixSocket(dir.resolve("s")).logger(log).start()) {
            String out = ExternalTools.run(30, "nbdinfo", "--list", "--json", server.uri("vm1")).assertOk("nbdinfo --list").stdout();
            assertTrue(out.contains("\"export-name\": \"vm1\""), out);
            assertTrue(out.contains("\"export-name\": \"vm2\""), out);
            assertTrue(out.contains("\"description\": \"second disk\""), out);
            assertTrue(out.contains("\"export-size\": " + (3 << 20)), out);
        }
    }

    @Test
    void directoryExportsFilesAddedLaterAndLeavesOutTheRest() throws Exception {
        ExternalTools.require("nbdinfo", "qemu-img");
        Path exports = Files.createDirectory(dir.resolve("exports"));
        sized(exports.resolve("vm1.img"), 1 << 20);
        Files.createDirectory(exports.resolve("subdir"));
        sized(exports.resolve(".hidden"), 4096);
        try (DirectoryExports source = DirectoryExports.of(exports,
                     file -> FileDevice.open(file, CacheMode.EVICT, StandardOpenOption.READ));
             NbdServer server = NbdServer.builder().exports(source).unixSocket(dir.resolve("s")).logger(log).start()) {
            String before = ExternalTools.run(30, "nbdinfo", "--list", server.uri("vm1.img")).assertOk("nbdinfo --list").stdout();
            assertTrue(before.contains("vm1.img"), before);
            assertFalse(before.contains("subdir") || before.contains(".hidden") || before.contains("vm2.img"), before);

            sized(exports.resolve("vm2.img"), 5 << 20);
            String after = ExternalTools.run(30, "nbdinfo", "--list", server.uri("vm1.img")).assertOk("nbdinfo --list").stdout();
            assertTrue(after.contains("vm2.img") && after.contains("file, " + (5 << 20) + " bytes"), after);
            String info = ExternalTools.run(30, "qemu-img", "info", "--output=json", server.uri("vm2.img"))
                    .assertOk("qemu-img info").stdout();
            assertTrue(info.contains("\"virtual-size\": " + (5 << 20)), info);
            assertTrue(ExternalTools.run(30, "nbdinfo", server.uri("subdir")).status() != 0, "a subdirectory is no export");
            assertTrue(ExternalTools.run(30, "nbdinfo", server.uri("..%2Fescape")).status() != 0, "no path outside the directory");
        }
    }

    /** What a test does with the file vm.img of a directory served, and with its server. */
    private interface VmTest {
        void run(Path vm, NbdServer server) throws Exception;
    }

    /** Serves a directory holding vm.img of 1 MiB, read-only, set up further by setup, to test. */
    private void withServedVm(UnaryOperator<NbdServer.Builder> setup, VmTest test) throws Exception {
        ExternalTools.require("nbdinfo");
        Path exports = Files.createDirectory(dir.resolve("exports"));
        Path vm = exports.resolve("vm.img");
        sized(vm, 1 << 20);
        try (DirectoryExports source = DirectoryExports.of(exports,
                     file -> FileDevice.open(file, CacheMode.WRITEBACK, StandardOpenOption.READ));
             NbdServer server = setup.apply(NbdServer.builder().exports(source).unixSocket(dir.resolve("s")).logger(log))
                     .start()) {
            test.run(vm, server);
        }
    }

    @Test
    void aFileResizedOrReplacedUnderItsNameIsServedAsItIsNowAndCountedOnce() throws Exception {
        withServedVm(builder -> builder.jmx("dir-exports-test"), (vm, server) -> {
            assertEquals(String.valueOf(1 << 20), size(server));
            sized(vm, 3 << 20); // in place: the same inode
            assertEquals(String.valueOf(3 << 20), size(server), "a client after the resize sees the size now");
            replace(vm, 2 << 20);
            assertEquals(String.valueOf(2 << 20), size(server), "a client after the replacement gets the new file");

            String metrics = server.metrics();
            long series = metrics.lines().filter(l -> l.startsWith("pagewise_nbd_export_size_bytes{export=\"vm.img\"}")).count();
            assertEquals(1, series, "one series per export name:\n" + metrics);
            assertTrue(metrics.contains("pagewise_nbd_export_size_bytes{export=\"vm.img\"} " + (2 << 20)), metrics);
            javax.management.MBeanServer jmx = java.lang.management.ManagementFactory.getPlatformMBeanServer();
            javax.management.ObjectName bean = new javax.management.ObjectName(
                    "io.pagewise:type=NbdServer,name=\"dir-exports-test\",export=\"vm.img\"");
            assertEquals((long) (2 << 20), jmx.getAttribute(bean, "SizeBytes"), "the bean is the new file's");
            assertEquals(0L, log.count("cannot register"), log.entries().toString());
        });
    }

    @Test
    void aReplacedOrDeletedFileIsClosedOnceItsLastClientIsGone() throws Exception {
        withServedVm(builder -> builder, (vm, server) -> {
            io.pagewise.nbd.client.NbdClient holder = io.pagewise.nbd.client.NbdClient.connect(server.uri("vm.img"));
            try {
                replace(vm, 2 << 20);
                assertEquals(String.valueOf(2 << 20), size(server));
                assertEquals(1, deletedFilesOpen(), "the old file stays open while a client has it");
                java.nio.ByteBuffer buffer = java.nio.ByteBuffer.allocate(4096);
                assertEquals(4096, holder.read(buffer, 0), "and that client still reads it");
            } finally {
                holder.close();
            }
            awaitNoDeletedFileOpen("the old file is closed with its last client");

            replace(vm, 3 << 20); // nobody has the current one open: closed at the next request
            assertEquals(String.valueOf(3 << 20), size(server));
            awaitNoDeletedFileOpen("a replaced file nobody uses is closed");

            Files.delete(vm);
            ExternalTools.run(30, "nbdinfo", "--list", server.uri("")); // any request or listing looks
            awaitNoDeletedFileOpen("a deleted file nobody uses is closed");
        });
    }

    /** Puts a new file of size bytes in the place of file, under its name, by an atomic rename. */
    private static void replace(Path file, long size) throws Exception {
        Path next = file.resolveSibling(".next");
        sized(next, size);
        Files.move(next, file, java.nio.file.StandardCopyOption.REPLACE_EXISTING, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
    }

    /** Descriptors of this process on files of this test's directory that have been deleted. */
    private long deletedFilesOpen() throws Exception {
        long count = 0;
        try (var fds = Files.list(Path.of("/proc/self/fd"))) {
            for (Path fd : (Iterable<Path>) fds::iterator) {
                try {
                    String target = Files.readSymbolicLink(fd).toString();
                    if (target.startsWith(dir.toString()) && target.endsWith(" (deleted)")) count++;
                } catch (java.io.IOException gone) {
                    // closed while listing
                }
            }
        }
        return count;
    }

    private void awaitNoDeletedFileOpen(String what) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (deletedFilesOpen() > 0 && System.nanoTime() < deadline) Thread.sleep(20); // the server ends connections on its threads
        assertEquals(0, deletedFilesOpen(), what);
    }

    private static String size(NbdServer server) throws Exception {
        return ExternalTools.run(30, "nbdinfo", "--size", server.uri("vm.img")).assertOk("nbdinfo --size").stdout().trim();
    }

    @Test
    void aClientGivingNoNameGetsTheDefaultExportAndItsName() throws Exception {
        ExternalTools.require("nbdinfo");
        try (MemoryDevice a = new MemoryDevice(1 << 20); MemoryDevice b = new MemoryDevice(2 << 20);
             NbdServer server = NbdServer.builder().export("vm1", a).export("vm2", b).defaultExport("vm2")
                     .unixSocket(dir.resolve("s")).logger(log).start()) {
            String json = ExternalTools.run(30, "nbdinfo", "--json", server.uri("")).assertOk("nbdinfo").stdout();
            assertTrue(json.contains("\"export-size\": " + (2 << 20)), json);
            assertTrue(json.contains("\"export-name\": \"vm2\""), json); // the canonical name, from NBD_INFO_NAME
            assertEquals(server.uri("vm2"), server.uri());
        }
    }

    @Test
    void aDefaultThatIsNoExportIsRefusedAtStart() {
        MemoryDevice a = new MemoryDevice(4096);
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> NbdServer.builder().export("vm1", a).defaultExport("vm3").unixSocket(dir.resolve("s")).start());
        assertTrue(e.getMessage().contains("'vm3'"), e.getMessage());
    }
}

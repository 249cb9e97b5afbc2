package io.pagewise.nbd;

import static io.pagewise.testing.TestData.sparseFile;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.CacheMode;
import io.pagewise.Extent;
import io.pagewise.device.ZeroFlag;
import io.pagewise.nbd.client.NbdClient;
import io.pagewise.nbd.server.ServerStats;
import io.pagewise.testing.ExternalTools;
import io.pagewise.testing.UnixSockets;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Extended headers against the clients and servers that speak them (libnbd 1.22, qemu 10) and those that do not
 * (nbdkit 1.42, qemu-nbd 7.2): 64-bit requests where both sides can, a clean fall-back where one cannot, and ABORT
 * before a client leaves a failed handshake.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class NewestToolsTest {
    private static final long GiB = 1L << 30;
    /** Over 4 GiB: one request or one extent covering it needs 64-bit lengths. */
    private static final long SIZE = 8 * GiB;

    @TempDir
    Path dir;

    private static List<String> command(List<String> tool, String... args) {
        List<String> command = new ArrayList<>(tool);
        command.addAll(List.of(args));
        return command;
    }

    private static ExternalTools.Result run(List<String> command) throws IOException {
        return ExternalTools.run(Map.of(), 60, command.toArray(new String[0]));
    }

    @Test
    void nbdinfoUsesExtendedPacketsAndMapsEightGibInOneExtent() throws Exception {
        List<String> nbdinfo = ExternalTools.newest("nbdinfo");
        try (TestServer server = TestServer.start(dir, SIZE, CacheMode.WRITEBACK)) {
            String info = run(command(nbdinfo, server.uri())).assertOk("nbdinfo").stdout();
            assertTrue(info.contains("using extended packets"), info);
            String map = run(command(nbdinfo, "--map", server.uri())).assertOk("nbdinfo --map").stdout();
            assertEquals(List.of("0", String.valueOf(SIZE), "3", "hole,zero"), List.of(map.trim().split("\\s+")), map);
            assertEquals(1, server.server.stats().ops(NbdCommand.BLOCK_STATUS), "one BLOCK_STATUS for 8 GiB");
        }
    }

    @Test
    void libnbdZeroesAndMapsMoreThanFourGibPerRequest() throws Exception {
        List<String> python = ExternalTools.newest("python3");
        String script = """
                import os, nbd
                h = nbd.NBD()
                h.add_meta_context("base:allocation")
                h.connect_uri(os.environ["uri"])
                assert h.get_extended_headers_negotiated()
                h.pwrite(b"x" * 4096, 7 << 30)
                h.zero(6 << 30, 0)
                seen = []
                h.block_status_64(8 << 30, 0, lambda ctx, offset, entries, err: seen.extend(entries))
                print(seen[0][0], seen[0][1])
                assert h.pread(4, 7 << 30) == b"xxxx"
                h.shutdown()
                """;
        try (TestServer server = TestServer.start(dir, SIZE, CacheMode.WRITEBACK)) {
            // chroot ROOT env uri=URI python3 -c SCRIPT: the script is not under the root's shared /tmp.
            List<String> command = command(python.subList(0, 2), "env", "uri=" + server.uri(), python.get(2), "-c", script);
            String out = run(command).assertOk("libnbd 1.22 script").stdout().trim();
            String[] first = out.split(" ");
            assertEquals("3", first[1], out);
            assertEquals(7 * GiB, Long.parseLong(first[0]), "one hole extent of 7 GiB: " + out);
            ServerStats stats = server.server.stats();
            assertEquals(1, stats.ops(NbdCommand.WRITE_ZEROES));
            assertEquals(6 * GiB, stats.bytes(NbdCommand.WRITE_ZEROES));
        }
    }

    @Test
    void qemu10WritesZeroesFiveGibAtOnceAndMaps() throws Exception {
        List<String> qemuIo = ExternalTools.newest("qemu-io");
        List<String> qemuImg = ExternalTools.newest("qemu-img");
        try (TestServer server = TestServer.start(dir, SIZE, CacheMode.WRITEBACK)) {
            run(command(qemuIo, "-f", "raw", "-c", "write -P 0x55 6G 64k", "-c", "write -z -n -u 0 5G",
                    "-c", "read -P 0x55 6G 64k", server.uri())).assertOk("qemu-io 10");
            ServerStats stats = server.server.stats();
            assertEquals(1, stats.ops(NbdCommand.WRITE_ZEROES));
            assertEquals(5 * GiB, stats.bytes(NbdCommand.WRITE_ZEROES));
            String map = run(command(qemuImg, "map", "--output=json", "-f", "raw", server.uri())).assertOk("qemu-img map")
                    .stdout();
            assertTrue(map.contains("\"start\": 0, \"length\": " + 6 * GiB + ","), map);
            assertEquals(0, server.server.stats().protocolErrors());
        }
    }

    @Test
    void clientUsesExtendedHeadersWithQemuNbd10() throws Exception {
        List<String> qemuNbd = ExternalTools.newest("qemu-nbd");
        Path image = sparseFile(dir.resolve("q.img"), SIZE);
        Path socket = dir.resolve("q.sock");
        Process server = start(command(qemuNbd, "-f", "raw", "-t", "-k", socket.toString(), image.toString()), socket);
        try (NbdClient nbd = NbdClient.connect("nbd+unix:///?socket=" + socket, 1)) {
            assertTrue(nbd.info().extendedHeaders(), nbd.info().toString());
            nbd.write(ByteBuffer.wrap(new byte[] {1, 2, 3}), 7 * GiB, false);
            nbd.zero(0, 5 * GiB, ZeroFlag.TRIM);
            List<Extent> map = nbd.extents(0, 7 * GiB);
            assertEquals(new Extent(0, 7 * GiB, true), map.get(0), "one extent over 4 GiB: " + map);
            ByteBuffer back = ByteBuffer.allocate(3);
            nbd.readFully(back, 7 * GiB);
            assertArrayEquals(new byte[] {1, 2, 3}, back.array());
        } finally {
            ExternalTools.stop(server);
        }
    }

    @Test
    void clientFallsBackWithNbdkit142() throws Exception {
        List<String> nbdkit = ExternalTools.newest("nbdkit");
        Path socket = dir.resolve("k.sock");
        Process server = start(command(nbdkit, "-f", "-U", socket.toString(), "memory", "8G"), socket);
        try (NbdClient nbd = NbdClient.connect("nbd+unix:///?socket=" + socket, 1)) {
            assertFalse(nbd.info().extendedHeaders(), nbd.info().toString());
            assertTrue(nbd.info().structuredReplies() && nbd.info().canExtents(), nbd.info().toString());
            nbd.write(ByteBuffer.wrap(new byte[] {4, 5}), 6 * GiB, false);
            nbd.zero(0, GiB, ZeroFlag.TRIM);
            ByteBuffer back = ByteBuffer.allocate(2);
            nbd.readFully(back, 6 * GiB);
            assertArrayEquals(new byte[] {4, 5}, back.array());
        } finally {
            ExternalTools.stop(server);
        }
    }

    /** qemu-nbd logs "Failed to read opts magic" for a client that closes mid-handshake; one that says ABORT is not. */
    @Test
    void aFailedHandshakeEndsWithAbort() throws Exception {
        ExternalTools.require("qemu-nbd");
        Path image = sparseFile(dir.resolve("q.img"), 1 << 20);
        Path socket = dir.resolve("q72.sock");
        Path log = dir.resolve("qemu-nbd.log");
        ProcessBuilder builder = new ProcessBuilder("qemu-nbd", "-f", "raw", "-t", "-k", socket.toString(), image.toString())
                .redirectErrorStream(true).redirectOutput(log.toFile());
        Process server = builder.start();
        try {
            awaitSocket(socket, server);
            IOException refused = assertThrows(IOException.class,
                    () -> NbdClient.connect("nbd+unix:///nosuch?socket=" + socket, 1).close());
            assertTrue(refused.getMessage().contains("no such export"), refused.getMessage());
            // A client that works afterwards shows that qemu-nbd has seen (and logged) the first one leave.
            NbdClient.connect("nbd+unix:///?socket=" + socket, 1).close();
        } finally {
            ExternalTools.stop(server);
        }
        String logged = Files.readString(log);
        assertFalse(logged.contains("opts magic") || logged.contains("end-of-file"), logged);
    }

    private static Process start(List<String> command, Path socket) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        awaitSocket(socket, process);
        return process;
    }

    private static void awaitSocket(Path socket, Process process) throws InterruptedException, IOException {
        for (int i = 0; i < 200 && !UnixSockets.listening(socket); i++) {
            if (!process.isAlive()) throw new AssertionError("server exited with " + process.exitValue());
            Thread.sleep(50);
        }
        assertTrue(UnixSockets.listening(socket), "nothing listens on " + socket);
    }
}

package io.pagewise.nbd;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.pagewise.cli.CommandRun;
import io.pagewise.backends.FileDevice;
import io.pagewise.cli.CopyCommand;
import io.pagewise.nbd.server.NbdServer;
import io.pagewise.testing.ExternalTools;
import io.pagewise.testing.TestCertificates;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.UnixDomainSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The TLS clients and servers people use, against ours: nbdinfo, nbdcopy and qemu-img reading from our server over
 * TLS (TCP and Unix sockets, with and without client certificates), and our copy reading from and writing to
 * {@code nbdkit --tls=require} and from and to {@code qemu-nbd --tls-creds}. Certificates are made with openssl for
 * localhost and 127.0.0.1.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class TlsInteropTest {
    private static final int SIZE = 24 << 20;

    static TestCertificates certs;

    @TempDir
    Path dir;
    /** What serve() opened; the server does not close its exports. */
    private FileDevice export;

    @org.junit.jupiter.api.AfterEach
    void closeExport() throws IOException {
        if (export != null) export.close();
    }

    @BeforeAll
    static void makeCertificates() throws IOException {
        certs = TestCertificates.shared();
    }

    /** Our server of a file of random data, TLS required. */
    private NbdServer serve(Path file, boolean unix, boolean verifyPeer) throws IOException {
        byte[] data = new byte[SIZE];
        new Random(21).nextBytes(data);
        Files.write(file, data);
        export = FileDevice.open(file, io.pagewise.CacheMode.WRITEBACK, java.nio.file.StandardOpenOption.READ, java.nio.file.StandardOpenOption.WRITE);
        NbdServer.Builder builder = NbdServer.builder().export("", export)
                .tls(TlsCertificates.serverContext(certs.all, verifyPeer), TlsMode.REQUIRE).tlsVerifyPeer(verifyPeer);
        if (unix) {
            builder.unixSocket(dir.resolve("tls.sock"));
        } else {
            builder.tcp(InetAddress.getByName("127.0.0.1"), 0);
        }
        return builder.start();
    }

    private static String uri(NbdServer server) {
        if (server.address() instanceof UnixDomainSocketAddress) {
            return server.uri() + "&tls-certificates=" + certs.all;
        }
        return "nbds://localhost:" + ((InetSocketAddress) server.address()).getPort() + "/?tls-certificates=" + certs.all;
    }

    @ParameterizedTest
    @ValueSource(strings = {"tcp", "unix", "tcp-verify-peer"})
    void nbdinfoAndNbdcopyReadOverTls(String setup) throws Exception {
        ExternalTools.require("nbdinfo", "nbdcopy");
        Path file = dir.resolve("disk.img");
        Path copy = dir.resolve("copy.img");
        try (NbdServer server = serve(file, setup.equals("unix"), setup.endsWith("verify-peer"))) {
            String uri = uri(server);
            assertTrue(uri.startsWith(setup.equals("unix") ? "nbds+unix://" : "nbds://"), uri);
            String size = ExternalTools.run(30, "nbdinfo", "--size", uri).assertOk("nbdinfo --size").stdout().trim();
            assertEquals(String.valueOf(SIZE), size);
            String info = ExternalTools.run(30, "nbdinfo", uri).assertOk("nbdinfo").stdout();
            assertTrue(info.contains("with TLS"), info);
            // Many requests in flight on several connections, each reply encrypted as it goes.
            ExternalTools.run(120, "nbdcopy", "--requests=64", "--connections=4", "--request-size=262144", uri,
                    copy.toString()).assertOk("nbdcopy over TLS");
            assertEquals(sha256(file), sha256(copy));
        }
    }

    @Test
    void nbdcopyWritesOverTls() throws Exception {
        ExternalTools.require("nbdcopy");
        Path file = dir.resolve("disk.img");
        Path source = dir.resolve("source.img");
        byte[] data = new byte[SIZE];
        new Random(99).nextBytes(data);
        Files.write(source, data);
        try (NbdServer server = serve(file, false, true)) {
            ExternalTools.run(120, "nbdcopy", "--requests=64", "--connections=4", "--flush", source.toString(), uri(server))
                    .assertOk("nbdcopy into our server over TLS");
        }
        assertEquals(sha256(source), sha256(file));
    }

    @ParameterizedTest
    @ValueSource(strings = {"tcp", "unix"})
    void qemuImgConvertsOverTlsWithItsX509Credentials(String setup) throws Exception {
        ExternalTools.require("qemu-img");
        Path file = dir.resolve("disk.img");
        Path copy = dir.resolve("copy.img");
        try (NbdServer server = serve(file, setup.equals("unix"), true)) {
            String address = server.address() instanceof UnixDomainSocketAddress
                    ? "server.type=unix,server.path=" + ((UnixDomainSocketAddress) server.address()).getPath()
                            + ",tls-hostname=localhost"
                    : "server.type=inet,server.host=localhost,server.port=" + ((InetSocketAddress) server.address()).getPort();
            ExternalTools.run(120, "qemu-img", "convert", "--object",
                    "tls-creds-x509,id=tls0,dir=" + certs.all + ",endpoint=client", "--image-opts",
                    "driver=nbd," + address + ",tls-creds=tls0", "-O", "raw", copy.toString()).assertOk("qemu-img convert");
            assertEquals(sha256(file), sha256(copy));
        }
    }

    @Test
    void pagewiseCopyReadsFromAndWritesToNbdkitOverTls() throws Exception {
        ExternalTools.require("nbdkit");
        Path served = dir.resolve("nbdkit.img");
        byte[] original = writeRandom(served, 3);
        Path socket = dir.resolve("nbdkit.sock");
        Process nbdkit = new ProcessBuilder("nbdkit", "-f", "-U", socket.toString(), "--tls=require",
                "--tls-certificates=" + certs.all, "--tls-verify-peer", "file", served.toString())
                .redirectErrorStream(true).redirectOutput(dir.resolve("nbdkit.log").toFile()).start();
        try {
            for (int i = 0; i < 200 && !Files.exists(socket); i++) Thread.sleep(25);
            assertTrue(Files.exists(socket), "nbdkit did not start: " + Files.readString(dir.resolve("nbdkit.log")));
            copyFromAndInto("nbds+unix:///?socket=" + socket + "&tls-certificates=" + certs.all, served, original);

            // Plain NBD against nbdkit --tls=require: refused with a clear message.
            String plain = "nbd+unix:///?socket=" + socket;
            String err = copyFails(plain, dir.resolve("never.img").toString());
            assertTrue(err.contains("requires TLS"), err);
        } finally {
            stop(nbdkit);
        }
    }

    @Test
    void pagewiseCopyReadsFromAndWritesToQemuNbdOverTls() throws Exception {
        ExternalTools.require("qemu-nbd");
        Path served = dir.resolve("qemu.img");
        byte[] original = writeRandom(served, 5);
        int port;
        try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            port = probe.getLocalPort();
        }
        // qemu's x509 credentials read the same directory layout; as a server they verify the client by default.
        Process qemu = new ProcessBuilder("qemu-nbd", "--object",
                "tls-creds-x509,id=tls0,dir=" + certs.all + ",endpoint=server", "--tls-creds=tls0",
                "--bind=127.0.0.1", "--port=" + port, "--persistent", "--shared=4", "--format=raw", served.toString())
                .redirectErrorStream(true).redirectOutput(dir.resolve("qemu-nbd.log").toFile()).start();
        try {
            awaitListening(port, qemu, dir.resolve("qemu-nbd.log"));
            copyFromAndInto("nbds://localhost:" + port + "/?tls-certificates=" + certs.all, served, original);

            // A client without a certificate: qemu-nbd verifies its peers, so the copy fails and says it was TLS.
            String err = copyFails("nbds://localhost:" + port + "/?tls-certificates=" + certs.caOnly,
                    dir.resolve("never.img").toString());
            assertTrue(err.contains("TLS") || err.contains("certificate"), err);
        } finally {
            stop(qemu);
        }
    }

    private static byte[] writeRandom(Path file, long seed) throws IOException {
        byte[] bytes = new byte[SIZE];
        new Random(seed).nextBytes(bytes);
        Files.write(file, bytes);
        return bytes;
    }

    /** pagewise copy reads served (holding original) through uri, then writes other bytes into it through uri. */
    private void copyFromAndInto(String uri, Path served, byte[] original) throws IOException {
        Path copy = dir.resolve("from-server.img");
        copy(uri, copy.toString());
        assertArrayEquals(original, Files.readAllBytes(copy));
        Path other = dir.resolve("to-server.img");
        byte[] replacement = writeRandom(other, original[0] + 1000L);
        copy(other.toString(), uri);
        assertArrayEquals(replacement, Files.readAllBytes(served));
    }

    private static void stop(Process server) throws InterruptedException {
        server.destroy();
        if (!server.waitFor(10, TimeUnit.SECONDS)) server.destroyForcibly();
    }

    private static void awaitListening(int port, Process server, Path log) throws Exception {
        for (int i = 0; i < 200; i++) {
            try (Socket s = new Socket(InetAddress.getByName("127.0.0.1"), port)) {
                return;
            } catch (IOException notYet) {
                if (!server.isAlive()) break;
                Thread.sleep(25);
            }
        }
        fail("the server did not start listening on 127.0.0.1:" + port + ": " + Files.readString(log));
    }

    private static void copy(String source, String destination) {
        CommandRun.command("copy", source, destination).assertOk();
    }

    private static String copyFails(String source, String destination) {
        CommandRun run = CommandRun.command("copy", source, destination);
        assertTrue(run.status() != 0, "copy from " + source + " should fail");
        return run.err();
    }

    private static String sha256(Path file) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(file)));
    }
}

package io.pagewise.nbd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.backends.MemoryDevice;
import io.pagewise.nbd.client.NbdClient;
import io.pagewise.nbd.server.NbdServer;
import io.pagewise.testing.ExternalTools;
import io.pagewise.testing.RecordingLogger;
import io.pagewise.testing.TestCertificates;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The allow-lists: client addresses (CIDR), Unix-socket users (SO_PEERCRED), TLS certificate subjects. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class AccessControlTest {
    private final RecordingLogger log = new RecordingLogger("[server] ", System.Logger.Level.INFO);

    @TempDir
    Path dir;

    private static String tcpUri(NbdServer server) {
        return "nbd://127.0.0.1:" + ((InetSocketAddress) server.address()).getPort() + "/";
    }

    @Test
    void aTcpClientOutsideTheAllowedBlocksIsRefusedAndLogged() throws Exception {
        ExternalTools.require("nbdinfo");
        try (MemoryDevice disk = new MemoryDevice(1 << 20);
             NbdServer server = NbdServer.builder().export("", disk).tcp(InetAddress.getLoopbackAddress(), 0)
                     .allow("10.0.0.0/8", "::1").logger(log).start()) {
            assertNotEquals(0, ExternalTools.run(30, "nbdinfo", "--size", tcpUri(server)).status());
            assertEquals(1, server.stats().accessRefusals());
            List<String> lines = log.messages(System.Logger.Level.WARNING, "refused: address 127.0.0.1:");
            assertEquals(1, lines.size(), log.entries().toString());
            assertTrue(lines.get(0).contains("[10.0.0.0/8, ::1]"), lines.get(0));
        }
        try (MemoryDevice disk = new MemoryDevice(1 << 20);
             NbdServer server = NbdServer.builder().export("", disk).tcp(InetAddress.getLoopbackAddress(), 0)
                     .allow("127.0.0.0/8").logger(log).start()) {
            String size = ExternalTools.run(30, "nbdinfo", "--size", tcpUri(server)).assertOk("nbdinfo").stdout().trim();
            assertEquals(String.valueOf(1 << 20), size);
            assertEquals(0, server.stats().accessRefusals());
        }
    }

    /** Each accepted socket has an id of its own in the log, a refused one too (they all used to be the next one's). */
    @Test
    void refusedConnectionsEachHaveTheirOwnId() throws Exception {
        try (MemoryDevice disk = new MemoryDevice(1 << 20);
             NbdServer server = NbdServer.builder().export("", disk).tcp(InetAddress.getLoopbackAddress(), 0)
                     .allow("10.0.0.0/8").logger(log).start()) {
            for (int i = 0; i < 2; i++) {
                if (i > 0) Thread.sleep(1100); // past the log's once-a-second throttle
                try (java.nio.channels.SocketChannel client = java.nio.channels.SocketChannel.open(server.address())) {
                    assertEquals(-1, client.read(java.nio.ByteBuffer.allocate(1)), "closed by the server");
                }
            }
            List<String> lines = log.messages(System.Logger.Level.WARNING, "refused: address 127.0.0.1:");
            assertEquals(2, lines.size(), log.entries().toString());
            assertTrue(lines.get(0).startsWith("connection 1 "), lines.get(0));
            assertTrue(lines.get(1).startsWith("connection 2 "), lines.get(1));
        }
    }

    @Test
    void aUnixClientOfAnotherUserIsRefused() throws Exception {
        ExternalTools.require("nbdinfo");
        String me = String.valueOf(Files.getAttribute(Files.createFile(dir.resolve("mine")), "unix:uid")); // this process's uid
        String other = me.equals("0") ? "65534" : "0";
        try (MemoryDevice disk = new MemoryDevice(1 << 20);
             NbdServer server = NbdServer.builder().export("", disk).unixSocket(dir.resolve("s"))
                     .allowUsers(other).logger(log).start()) {
            assertNotEquals(0, ExternalTools.run(30, "nbdinfo", "--size", server.uri()).status());
            assertEquals(1, server.stats().accessRefusals());
            assertEquals(1, log.messages(System.Logger.Level.WARNING, "is not an allowed user").size(), log.entries().toString());
        }
        try (MemoryDevice disk = new MemoryDevice(1 << 20);
             NbdServer server = NbdServer.builder().export("", disk).unixSocket(dir.resolve("s"))
                     .allowUsers(other, me).logger(log).start()) {
            ExternalTools.run(30, "nbdinfo", "--size", server.uri()).assertOk("nbdinfo as an allowed user");
        }
    }

    @Test
    void onlyListedCertificateSubjectsGetPastTls() throws Exception {
        ExternalTools.require("nbdinfo");
        TestCertificates certs = TestCertificates.make(dir.resolve("certs"));
        Path authz = Files.writeString(dir.resolve("authz"), "# who may connect\n\ncn=EC client\n");
        try (MemoryDevice disk = new MemoryDevice(1 << 20);
             NbdServer server = NbdServer.builder().export("", disk).unixSocket(dir.resolve("s"))
                     .tls(TlsCertificates.serverContext(certs.all, true), TlsMode.REQUIRE).tlsAuthzFile(authz)
                     .logger(log).start()) {
            String refused = server.uri() + "&tls-certificates=" + certs.all; // CN=client
            assertNotEquals(0, ExternalTools.run(30, "nbdinfo", "--size", refused).status());
            // Told why, by an option reply inside TLS: a bare close would read as a network fault.
            IOException e = assertThrows(IOException.class, () -> NbdClient.connect(refused).close());
            assertTrue(e.getMessage().contains("refused by policy (this client may not connect: certificate subject"
                    + " 'CN=client' is not in the TLS allow-list)"), e.getMessage());
            for (long end = System.nanoTime() + 10_000_000_000L; server.stats().accessRefusals() < 2 && System.nanoTime() < end; ) {
                Thread.sleep(10); // the server counts the refusal once its reply is out
            }
            assertEquals(2, server.stats().accessRefusals());
            int logged = log.messages(System.Logger.Level.WARNING, "certificate subject 'CN=client' is not in the TLS allow-list")
                    .size(); // a second refusal within a second of the first is held back
            assertTrue(logged == 1 || logged == 2, log.entries().toString());
            String allowed = server.uri() + "&tls-certificates=" + certs.ecClient; // CN=ec client
            ExternalTools.run(30, "nbdinfo", "--size", allowed).assertOk("nbdinfo with an allowed certificate");
        }
    }

    @Test
    void badListsAreRefusedNamingTheValue() throws Exception {
        NbdServer.Builder builder = NbdServer.builder();
        assertTrue(assertThrows(IllegalArgumentException.class, () -> builder.allow("10.0.0.0/33")).getMessage().contains("10.0.0.0/33"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> builder.allow("example.com")).getMessage().contains("example.com"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> builder.allowUsers("no-such-user-here")).getMessage()
                .contains("no-such-user-here"));
        Path bad = Files.writeString(dir.resolve("authz"), "CN=ok\nnot a name\n");
        String message = assertThrows(IllegalArgumentException.class, () -> builder.tlsAuthzFile(bad)).getMessage();
        assertTrue(message.contains(bad + " line 2") && message.contains("not a name"), message);
        Path empty = Files.writeString(dir.resolve("empty"), "# nobody\n");
        assertTrue(assertThrows(IllegalArgumentException.class, () -> builder.tlsAuthzFile(empty)).getMessage().contains("no TLS client"));
    }
}

package io.pagewise.nbd;

import static io.pagewise.nbd.wire.Protocol.*;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.backends.MemoryDevice;
import io.pagewise.nbd.client.NbdClient;
import io.pagewise.nbd.server.NbdServer;
import io.pagewise.nbd.tls.TlsChannel;
import io.pagewise.nbd.wire.SocketIo;
import io.pagewise.testing.ForwardingChannel;
import io.pagewise.testing.RecordingLogger;
import io.pagewise.testing.TestCertificates;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ByteChannel;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLException;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * TLS between our client and our server, and what the server does with clients that get TLS wrong: each bad
 * client gets a clear error, and the server goes on serving a good one.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TlsTest {
    private static final int SIZE = 4 << 20;

    static TestCertificates certs;

    @TempDir
    Path dir;

    @BeforeAll
    static void makeCertificates() throws IOException {
        certs = TestCertificates.shared();
    }

    /** A server of a 4 MiB memory export with random data, on TCP 127.0.0.1 or a Unix socket. */
    private final class Server implements AutoCloseable {
        final MemoryDevice export = new MemoryDevice(SIZE);
        final byte[] data = new byte[SIZE];
        final RecordingLogger log = new RecordingLogger("[server] ", System.Logger.Level.INFO);
        final NbdServer server;

        Server(Path certificates, TlsMode mode, boolean verifyPeer, boolean unix) throws IOException {
            new Random(13).nextBytes(data);
            export.write(ByteBuffer.wrap(data), 0, false);
            NbdServer.Builder builder = NbdServer.builder().export("", export).logger(log)
                    .tls(TlsCertificates.serverContext(certificates, verifyPeer), mode).tlsVerifyPeer(verifyPeer);
            if (unix) {
                builder.unixSocket(dir.resolve("tls.sock"));
            } else {
                builder.tcp(InetAddress.getByName("127.0.0.1"), 0);
            }
            server = builder.start();
        }

        /** {@return the URI to reach the server over TLS under host name host (TCP) with certificates} */
        String uri(String host, Path certificates) {
            SocketAddress address = server.address();
            String query = "tls-certificates=" + certificates;
            if (address instanceof UnixDomainSocketAddress) {
                return "nbds+unix:///?socket=" + ((UnixDomainSocketAddress) address).getPath() + "&" + query;
            }
            return "nbds://" + host + ":" + ((InetSocketAddress) address).getPort() + "/?" + query;
        }

        /** A good client reads the whole export and gets the data back. */
        void servesGoodClient() throws IOException {
            servesGoodClient(certs.all);
        }

        void servesGoodClient(Path clientCertificates) throws IOException {
            try (NbdClient client = NbdClient.connect(uri("localhost", clientCertificates))) {
                ByteBuffer back = ByteBuffer.allocate(SIZE);
                client.read(back, 0);
                assertArrayEquals(data, back.array());
            }
        }

        @Override
        public void close() throws IOException {
            server.close();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"tcp", "unix", "tcp-verify-peer", "unix-verify-peer"})
    void ourClientReadsAndWritesOverTls(String setup) throws Exception {
        boolean verifyPeer = setup.endsWith("verify-peer");
        try (Server s = new Server(certs.all, TlsMode.REQUIRE, verifyPeer, setup.startsWith("unix"))) {
            assertTrue(s.server.uri().startsWith("nbds"), s.server.uri());
            try (NbdClient client = NbdClient.connect(s.uri("localhost", certs.all), 4)) {
                byte[] written = new byte[3 << 20];
                new Random(5).nextBytes(written);
                client.write(ByteBuffer.wrap(written), 512 * 1024, true);
                ByteBuffer back = ByteBuffer.allocate(written.length);
                client.read(back, 512 * 1024);
                assertArrayEquals(written, back.array());
                ByteBuffer stored = ByteBuffer.allocate(written.length);
                s.export.readFully(stored, 512 * 1024);
                assertArrayEquals(written, stored.array());
            }
            // Over TCP the certificate names 127.0.0.1 as well as localhost.
            if (!setup.startsWith("unix")) {
                try (NbdClient client = NbdClient.connect(s.uri("127.0.0.1", certs.all))) {
                    assertEquals(SIZE, client.size());
                }
            }
        }
    }

    @Test
    void serverKeyInPkcs8AndClientKeyInSec1Work() throws Exception {
        try (Server s = new Server(certs.pkcs8Server, TlsMode.REQUIRE, true, false)) {
            s.servesGoodClient(certs.ecClient);
        }
    }

    @Test
    void onModeServesPlainAndTlsClients() throws Exception {
        try (Server s = new Server(certs.all, TlsMode.ON, false, false)) {
            assertTrue(s.server.uri().startsWith("nbd://"), s.server.uri());
            try (NbdClient plain = NbdClient.connect(s.server.uri())) {
                assertEquals(SIZE, plain.size());
            }
            s.servesGoodClient();
        }
    }

    @Test
    void clientRefusesServerWithoutTls() throws Exception {
        try (NbdServer plain = NbdServer.builder().export("", new MemoryDevice(SIZE))
                .tcp(InetAddress.getByName("127.0.0.1"), 0).start()) {
            int port = ((InetSocketAddress) plain.address()).getPort();
            IOException e = assertThrows(IOException.class,
                    () -> NbdClient.connect("nbds://localhost:" + port + "/?tls-certificates=" + certs.all).close());
            assertTrue(e.getMessage().contains("will not start TLS"), e.getMessage());
        }
    }

    @Test
    void plaintextClientAgainstRequireIsToldTlsIsRequired() throws Exception {
        try (Server s = new Server(certs.all, TlsMode.REQUIRE, false, false)) {
            int port = ((InetSocketAddress) s.server.address()).getPort();
            IOException e = assertThrows(IOException.class, () -> NbdClient.connect("nbd://127.0.0.1:" + port + "/").close());
            assertTrue(e.getMessage().contains("requires TLS"), e.getMessage());
            s.servesGoodClient();
        }
    }

    @Test
    void clientThatDoesNotTrustTheServerCaFails() throws Exception {
        try (Server s = new Server(certs.all, TlsMode.REQUIRE, false, false)) {
            SSLException e = assertThrows(SSLException.class, () -> NbdClient.connect(s.uri("localhost", certs.otherCa)).close());
            assertTrue(e.getMessage().contains("TLS handshake failed: its certificate is not signed by a CA this client"
                    + " trusts") && e.getMessage().contains("PKIX"), e.getMessage());
            s.servesGoodClient();
        }
    }

    @Test
    void hostNameThatTheCertificateDoesNotNameFails() throws Exception {
        try (Server s = new Server(certs.all, TlsMode.REQUIRE, false, false)) {
            int port = ((InetSocketAddress) s.server.address()).getPort();
            // The loopback address under a name that the certificate (DNS:localhost, IP:127.0.0.1) does not give.
            InetAddress renamed = InetAddress.getByAddress("notlocal", new byte[] {127, 0, 0, 1});
            NbdUri uri = new NbdUri(new InetSocketAddress(renamed, port), "", "nbds://notlocal:" + port + "/", true, certs.all);
            SSLException e = assertThrows(SSLException.class, () -> NbdClient.connect(uri, 1).close());
            assertTrue(causes(e).contains("notlocal"), causes(e));
            s.servesGoodClient();
        }
    }

    @Test
    void tlsHostnameIsTheNameCheckedEvenOnAUnixSocket() throws Exception {
        try (Server s = new Server(certs.all, TlsMode.REQUIRE, false, true)) {
            String uri = s.uri("localhost", certs.all);
            // The right name is accepted; a name the certificate does not give is refused.
            try (NbdClient client = NbdClient.connect(uri + "&tls-hostname=localhost")) {
                assertEquals(SIZE, client.size());
            }
            SSLException e = assertThrows(SSLException.class,
                    () -> NbdClient.connect(uri + "&tls-hostname=elsewhere.example").close());
            assertTrue(causes(e).contains("elsewhere.example"), causes(e));
            s.servesGoodClient();
        }
        try (Server s = new Server(certs.all, TlsMode.REQUIRE, false, false)) {
            // Over TCP it replaces the URI's host: 127.0.0.1 is in the certificate, "elsewhere.example" is not.
            SSLException e = assertThrows(SSLException.class,
                    () -> NbdClient.connect(s.uri("127.0.0.1", certs.all) + "&tls-hostname=elsewhere.example").close());
            assertTrue(causes(e).contains("elsewhere.example"), causes(e));
        }
    }

    @Test
    void tlsVerifyPeerFalseAcceptsAServerItCannotVerify() throws Exception {
        try (Server s = new Server(certs.all, TlsMode.REQUIRE, false, false)) {
            // The other CA did not sign the server's certificate, and the name is wrong as well: both go unchecked.
            String uri = s.uri("127.0.0.1", certs.otherCa) + "&tls-hostname=elsewhere.example&tls-verify-peer=false";
            try (NbdClient client = NbdClient.connect(uri)) {
                ByteBuffer back = ByteBuffer.allocate(SIZE);
                client.read(back, 0);
                assertArrayEquals(s.data, back.array());
            }
            // Without a tls-certificates directory too; and "true" keeps the check.
            int port = ((InetSocketAddress) s.server.address()).getPort();
            try (NbdClient client = NbdClient.connect("nbds://127.0.0.1:" + port + "/?tls-verify-peer=0")) {
                assertEquals(SIZE, client.size());
            }
            assertThrows(SSLException.class,
                    () -> NbdClient.connect(s.uri("localhost", certs.otherCa) + "&tls-verify-peer=true").close());
        }
    }

    @Test
    void tlsVerifyPeerFalseStillPresentsTheClientCertificate() throws Exception {
        try (Server s = new Server(certs.all, TlsMode.REQUIRE, true, false)) {
            try (NbdClient client = NbdClient.connect(s.uri("localhost", certs.all) + "&tls-verify-peer=false")) {
                ByteBuffer back = ByteBuffer.allocate(SIZE);
                client.read(back, 0);
                assertArrayEquals(s.data, back.array());
            }
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"no-certificate", "certificate-of-another-ca"})
    void verifyPeerRefusesMissingOrWrongClientCertificate(String which) throws Exception {
        Path clientDir = which.equals("no-certificate") ? certs.caOnly : certs.otherClient;
        try (Server s = new Server(certs.all, TlsMode.REQUIRE, true, false)) {
            IOException e = assertThrows(IOException.class, () -> {
                try (NbdClient client = NbdClient.connect(s.uri("localhost", clientDir))) {
                    client.read(ByteBuffer.allocate(512), 0); // under TLS 1.3 the refusal may come after the handshake
                }
            });
            // Said as what happened, whether the alert came in the handshake (TLS 1.2) or at the first answer (1.3).
            assertTrue(e.getMessage().contains(which.equals("no-certificate")
                    ? "requires a TLS client certificate, and this client has none"
                    : "refused this client's TLS certificate"), causes(e));
            awaitLogged(s.log, "TLS handshake failed");
            s.servesGoodClient();
        }
    }

    /**
     * Servers tell a missing client certificate by different alerts: JDK 17.0.15 sent bad_certificate under TLS 1.3,
     * later JDKs send certificate_required, and under TLS 1.2 handshake_failure. The client knows whether it sent a
     * certificate, and says so whichever comes. A server that asks for one under TLS 1.2 stands in here: its alerts
     * before its Finished go in the clear, so the JDK's own is replaced by the one under test on its way out.
     */
    @ParameterizedTest
    @CsvSource({"no-certificate, bad_certificate, 42", "no-certificate, certificate_required, 116",
            "no-certificate, handshake_failure, 40", "certificate-of-another-ca, bad_certificate, 42",
            "certificate-of-another-ca, certificate_unknown, 46"})
    void theClientSaysWhetherItSentACertificateWhicheverAlertRefusesIt(String which, String alert, byte code)
            throws Exception {
        boolean none = which.equals("no-certificate");
        SSLEngine engine = TlsCertificates.serverContext(certs.all, true).createSSLEngine();
        engine.setUseClientMode(false);
        engine.setNeedClientAuth(true);
        engine.setEnabledProtocols(new String[] {"TLSv1.2"});
        try (ServerSocketChannel listener = ServerSocketChannel.open()) {
            listener.bind(new InetSocketAddress(InetAddress.getByName("127.0.0.1"), 0));
            AtomicBoolean replaced = new AtomicBoolean();
            CompletableFuture<SSLException> refused = CompletableFuture.supplyAsync(() -> {
                try (SocketChannel socket = listener.accept()) {
                    SocketIo.writeFully(socket, ByteBuffer.allocate(18).putLong(NBDMAGIC).putLong(IHAVEOPT)
                            .putShort((short) (FLAG_FIXED_NEWSTYLE | FLAG_NO_ZEROES)).flip());
                    SocketIo.readExactly(socket, ByteBuffer.allocate(4 + 16)); // the client's flags, then STARTTLS
                    SocketIo.writeFully(socket, ByteBuffer.allocate(20).putLong(OPTION_REPLY_MAGIC)
                            .putInt(OPT_STARTTLS).putInt(REP_ACK).putInt(0).flip());
                    SSLException failed = assertThrows(SSLException.class,
                            () -> TlsChannel.handshake(new AlertReplacing(socket, code, replaced), engine));
                    // Closing now could reset the connection under the client's last handshake writes, before it
                    // reads the alert: wait until it hangs up.
                    while (socket.read(ByteBuffer.allocate(4096)) >= 0) {}
                    return failed;
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
            int port = ((InetSocketAddress) listener.getLocalAddress()).getPort();
            Path clientDir = none ? certs.caOnly : certs.otherClient;
            IOException e = assertThrows(IOException.class,
                    () -> NbdClient.connect("nbds://localhost:" + port + "/?tls-certificates=" + clientDir).close());
            String serverSaw = refused.get(30, TimeUnit.SECONDS).getMessage();
            assertTrue(serverSaw.contains(none ? "Empty client certificate chain" : "PKIX"), serverSaw);
            assertTrue(replaced.get(), "the server's alert was replaced by " + alert);
            assertTrue(causes(e).contains("Received fatal alert: " + alert), causes(e));
            assertTrue(e.getMessage().contains(none
                    ? "requires a TLS client certificate, and this client has none"
                    : "refused this client's TLS certificate (" + alert + ")"), causes(e));
        }
    }

    /** The socket, but the fatal alert written in the clear goes out as the one given. */
    private record AlertReplacing(SocketChannel channel, byte alert, AtomicBoolean replaced)
            implements ForwardingChannel {
        @Override
        public int write(ByteBuffer src) throws IOException {
            int at = src.position();
            // An alert record: type 21, the version, length 2, then level 2 (fatal) and the description.
            if (src.remaining() == 7 && src.get(at) == 21 && src.getShort(at + 3) == 2 && src.get(at + 5) == 2) {
                src.put(at + 6, alert);
                replaced.set(true);
            }
            return channel.write(src);
        }
    }

    @Test
    void expiredServerCertificateIsRefused() throws Exception {
        try (Server s = new Server(certs.expiredServer, TlsMode.REQUIRE, false, false)) {
            SSLException e = assertThrows(SSLException.class, () -> NbdClient.connect(s.uri("localhost", certs.all)).close());
            assertTrue(causes(e).contains("expired") || causes(e).contains("NotAfter"), causes(e));
        }
    }

    /** What a test does with a connection, or with the server once that connection is closed. */
    private interface Step<T> {
        void on(T t) throws Exception;
    }

    /**
     * A REQUIRE server; a raw client asks for STARTTLS in the clear, then does what badClient does and hangs up;
     * the server must then show afterwards, and still serve a good client.
     */
    private void assertServesAfterBadTlsClient(Step<SocketChannel> badClient, Step<Server> afterwards) throws Exception {
        try (Server s = new Server(certs.all, TlsMode.REQUIRE, false, false)) {
            try (SocketChannel raw = SocketChannel.open(s.server.address())) {
                startTlsInClear(raw);
                badClient.on(raw);
            }
            afterwards.on(s);
            s.servesGoodClient();
        }
    }

    @Test
    void garbageInsteadOfClientHelloIsDroppedAndLogged() throws Exception {
        assertServesAfterBadTlsClient(raw -> {
            byte[] garbage = new byte[600];
            new Random(1).nextBytes(garbage);
            garbage[0] = 0x47; // 'G', not a TLS record type
            SocketIo.writeFully(raw, ByteBuffer.wrap(garbage));
            assertTrue(readsToEnd(raw), "the server closes the connection");
        }, s -> awaitLogged(s.log, "TLS handshake failed"));
    }

    @Test
    void clientVanishingMidHandshakeLeavesTheServerServing() throws Exception {
        assertServesAfterBadTlsClient(raw -> {
            SSLEngine engine = TlsCertificates.clientContext(certs.all).createSSLEngine("localhost", 0);
            engine.setUseClientMode(true);
            engine.beginHandshake();
            ByteBuffer hello = ByteBuffer.allocate(engine.getSession().getPacketBufferSize());
            engine.wrap(ByteBuffer.allocate(0), hello);
            hello.flip().limit(hello.limit() / 2);
            SocketIo.writeFully(raw, hello); // half a ClientHello, then gone
        }, s -> awaitConnections(s.server, 0));
    }

    @Test
    void startTlsWithDataOrTwiceIsInvalidAndExportNameBeforeTlsCloses() throws Exception {
        try (Server s = new Server(certs.all, TlsMode.REQUIRE, false, false)) {
            try (SocketChannel raw = SocketChannel.open(s.server.address())) {
                greeting(raw);
                assertEquals(REP_ERR_INVALID, ask(raw, OPT_STARTTLS, new byte[] {1, 2, 3}));
                assertEquals(REP_ERR_TLS_REQD, ask(raw, OPT_LIST, new byte[0]));
                assertEquals(REP_ACK, ask(raw, OPT_STARTTLS, new byte[0]));
                TlsChannel tls = TlsChannel.handshake(raw, clientEngine());
                assertEquals(REP_ERR_INVALID, ask(tls, OPT_STARTTLS, new byte[0]));
                assertEquals(REP_SERVER, ask(tls, OPT_LIST, new byte[0]));
            }
            try (SocketChannel raw = SocketChannel.open(s.server.address())) {
                greeting(raw);
                sendOption(raw, OPT_EXPORT_NAME, new byte[0]);
                assertTrue(readsToEnd(raw), "EXPORT_NAME before TLS in require mode ends the session");
            }
            s.servesGoodClient();
        }
    }

    /** The spec: STARTTLS forgets what was negotiated in clear, extended headers included. */
    @Test
    void startTlsForgetsExtendedHeaders() throws Exception {
        try (Server s = new Server(certs.all, TlsMode.ON, false, false);
             SocketChannel raw = SocketChannel.open(s.server.address())) {
            greeting(raw);
            assertEquals(REP_ACK, ask(raw, OPT_EXTENDED_HEADERS, new byte[0]));
            assertEquals(REP_ACK, ask(raw, OPT_STARTTLS, new byte[0]));
            TlsChannel tls = TlsChannel.handshake(raw, clientEngine());
            assertEquals(REP_ACK, ask(tls, OPT_STRUCTURED_REPLY, new byte[0]), "extended headers were forgotten");
            assertEquals(REP_ACK, ask(tls, OPT_EXTENDED_HEADERS, new byte[0]));
            assertEquals(REP_ERR_EXT_HEADER_REQD, ask(tls, OPT_STRUCTURED_REPLY, new byte[0]));
        }
    }

    /**
     * In require mode only the greeting, the client flags, STARTTLS and its ACK cross the wire in clear: a proxy
     * records both directions of a whole session of our client (handshake, a read of the export, disconnect), and
     * after those messages each direction parses as nothing but TLS records to its last byte. The export's data
     * appears nowhere on the wire.
     */
    @Test
    void nothingButGreetingAndStartTlsCrossesTheWireInClear() throws Exception {
        try (Server s = new Server(certs.all, TlsMode.REQUIRE, false, false);
             RecordingProxy proxy = new RecordingProxy(s.server.address())) {
            String uri = "nbds://127.0.0.1:" + proxy.port() + "/?tls-certificates=" + certs.all;
            try (NbdClient client = NbdClient.connect(uri)) {
                ByteBuffer back = ByteBuffer.allocate(SIZE);
                client.read(back, 0);
                assertArrayEquals(s.data, back.array());
            }
            byte[] fromServer = proxy.awaitFromServer();
            byte[] fromClient = proxy.awaitFromClient();

            ByteBuffer server = ByteBuffer.wrap(fromServer);
            assertEquals(NBDMAGIC, server.getLong());
            assertEquals(IHAVEOPT, server.getLong());
            server.getShort();
            assertEquals(OPTION_REPLY_MAGIC, server.getLong());
            assertEquals(OPT_STARTTLS, server.getInt());
            assertEquals(REP_ACK, server.getInt());
            assertEquals(0, server.getInt());
            assertOnlyTlsRecords(server, "server to client");

            ByteBuffer client = ByteBuffer.wrap(fromClient);
            client.getInt(); // client flags
            assertEquals(IHAVEOPT, client.getLong());
            assertEquals(OPT_STARTTLS, client.getInt());
            assertEquals(0, client.getInt());
            assertOnlyTlsRecords(client, "client to server");

            byte[] sample = Arrays.copyOfRange(s.data, 1 << 20, (1 << 20) + 16);
            assertFalse(contains(fromServer, sample), "export data crossed the wire in clear");
        }
    }

    /** Walks TLS records (type, version 3.x, length) to the very end of wire. */
    private static void assertOnlyTlsRecords(ByteBuffer wire, String direction) {
        int records = 0;
        while (wire.hasRemaining()) {
            int at = wire.position();
            assertTrue(wire.remaining() >= 5, direction + ": a partial record header at byte " + at);
            int type = wire.get() & 0xff;
            int major = wire.get() & 0xff;
            wire.get();
            int length = wire.getShort() & 0xffff;
            assertTrue(type >= 20 && type <= 23, direction + ": byte " + at + " starts no TLS record (type " + type + ")");
            assertEquals(3, major, direction + ": record version at byte " + at);
            assertTrue(length <= wire.remaining(), direction + ": record at byte " + at + " is cut short");
            wire.position(wire.position() + length);
            records++;
        }
        assertTrue(records > 2, direction + ": " + records + " TLS records");
    }

    // ---- helpers ----

    private static SSLEngine clientEngine() throws IOException {
        SSLEngine engine = TlsCertificates.clientContext(certs.all).createSSLEngine("localhost", 0);
        engine.setUseClientMode(true);
        return engine;
    }

    private static void greeting(ByteChannel raw) throws IOException {
        ByteBuffer greeting = ByteBuffer.allocate(18);
        SocketIo.readExactly(raw, greeting);
        assertEquals(NBDMAGIC, greeting.getLong(0));
        SocketIo.writeFully(raw, ByteBuffer.allocate(4).putInt(CLIENT_FIXED_NEWSTYLE | CLIENT_NO_ZEROES).flip());
    }

    private static void startTlsInClear(SocketChannel raw) throws IOException {
        greeting(raw);
        assertEquals(REP_ACK, ask(raw, OPT_STARTTLS, new byte[0]));
    }

    private static void sendOption(ByteChannel channel, int option, byte[] data) throws IOException {
        ByteBuffer message = ByteBuffer.allocate(16 + data.length).putLong(IHAVEOPT).putInt(option).putInt(data.length)
                .put(data).flip();
        SocketIo.writeFully(channel, message);
    }

    /** Sends an option and {@return the type of the server's reply to it} */
    private static int ask(ByteChannel channel, int option, byte[] data) throws IOException {
        sendOption(channel, option, data);
        return replyType(channel, option);
    }

    /** Reads one option reply to option and returns its type (its data is read and dropped). */
    private static int replyType(ByteChannel channel, int option) throws IOException {
        ByteBuffer head = ByteBuffer.allocate(20);
        SocketIo.readExactly(channel, head);
        assertEquals(OPTION_REPLY_MAGIC, head.getLong(0));
        assertEquals(option, head.getInt(8));
        int length = head.getInt(16);
        SocketIo.readExactly(channel, ByteBuffer.allocate(length));
        return head.getInt(12);
    }

    /** True when the peer closes the connection (possibly after a TLS alert) within the test's time. */
    private static boolean readsToEnd(SocketChannel raw) throws IOException {
        ByteBuffer sink = ByteBuffer.allocate(4096);
        try {
            while (raw.read(sink.clear()) >= 0) {
                // an alert, then the end
            }
            return true;
        } catch (IOException e) {
            return e.getMessage() != null && e.getMessage().contains("reset");
        }
    }

    private static void awaitLogged(RecordingLogger log, String text) throws InterruptedException {
        for (int i = 0; i < 500 && log.count(text) == 0; i++) Thread.sleep(10);
        assertTrue(log.count(text) > 0, "server logged '" + text + "': " + log.entries());
    }

    private static void awaitConnections(NbdServer server, int count) throws InterruptedException {
        for (int i = 0; i < 500 && server.connectionCount() != count; i++) Thread.sleep(10);
        assertEquals(count, server.connectionCount());
    }

    private static String causes(Throwable e) {
        StringBuilder all = new StringBuilder();
        for (Throwable t = e; t != null; t = t.getCause()) all.append(t).append(" / ");
        return all.toString();
    }

    private static boolean contains(byte[] haystack, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= haystack.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (haystack[i + j] != needle[j]) continue outer;
            }
            return true;
        }
        return false;
    }

    /** Forwards one TCP connection to a server and keeps every byte of both directions. */
    private static final class RecordingProxy implements AutoCloseable {
        private final java.nio.channels.ServerSocketChannel listener;
        private final SocketAddress target;
        private final ByteArrayOutputStream fromServer = new ByteArrayOutputStream();
        private final ByteArrayOutputStream fromClient = new ByteArrayOutputStream();
        private final Thread acceptor;
        private Thread up;
        private Thread down;

        RecordingProxy(SocketAddress target) throws IOException {
            this.target = target;
            listener = java.nio.channels.ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
            acceptor = new Thread(this::serve, "recording-proxy");
            acceptor.setDaemon(true);
            acceptor.start();
        }

        int port() throws IOException {
            return ((InetSocketAddress) listener.getLocalAddress()).getPort();
        }

        private void serve() {
            try {
                SocketChannel client = listener.accept();
                SocketChannel server = SocketChannel.open(target);
                up = pump(client, server, fromClient);
                down = pump(server, client, fromServer);
            } catch (IOException e) {
                // the test fails on what was not recorded
            }
        }

        private static Thread pump(SocketChannel from, SocketChannel to, ByteArrayOutputStream record) {
            Thread t = new Thread(() -> {
                ByteBuffer buffer = ByteBuffer.allocate(64 * 1024);
                try {
                    while (from.read(buffer.clear()) >= 0) {
                        buffer.flip();
                        synchronized (record) {
                            record.write(buffer.array(), 0, buffer.limit());
                        }
                        SocketIo.writeFully(to, buffer);
                    }
                } catch (IOException e) {
                    // one side closed
                } finally {
                    try {
                        to.shutdownOutput();
                    } catch (IOException ignored) {
                        // already closed
                    }
                }
            }, "recording-proxy-pump");
            t.setDaemon(true);
            t.start();
            return t;
        }

        byte[] awaitFromServer() throws InterruptedException {
            acceptor.join(10_000);
            down.join(10_000);
            synchronized (fromServer) {
                return fromServer.toByteArray();
            }
        }

        byte[] awaitFromClient() throws InterruptedException {
            acceptor.join(10_000);
            up.join(10_000);
            synchronized (fromClient) {
                return fromClient.toByteArray();
            }
        }

        @Override
        public void close() throws IOException {
            listener.close();
        }
    }
}

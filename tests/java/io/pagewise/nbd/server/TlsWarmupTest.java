package io.pagewise.nbd.server;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.backends.MemoryDevice;
import io.pagewise.nbd.TestServer;
import io.pagewise.nbd.TlsCertificates;
import io.pagewise.nbd.TlsMode;
import io.pagewise.nbd.client.NbdClient;
import io.pagewise.testing.RecordingLogger;
import io.pagewise.testing.TestCertificates;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import javax.net.ssl.SSLContext;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A server with TLS warms its TLS code up in the background when it starts (see TlsWarmup): it finishes with every
 * kind of server key, a failure costs nothing but the log line, close() stops it, and a server without TLS has none.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TlsWarmupTest {
    private static final int SIZE = 1 << 20;

    static TestCertificates certs;

    @BeforeAll
    static void makeCertificates() throws IOException {
        certs = TestCertificates.shared();
    }

    /** A warm-up that runs for minutes unless stopped. */
    private static final long ENDLESS = 1L << 40;

    private static NbdServer start(SSLContext context, TlsMode mode, boolean verifyPeer, RecordingLogger log, MemoryDevice export)
            throws IOException {
        return builder(context, mode, verifyPeer, log, export).start();
    }

    private static NbdServer.Builder builder(SSLContext context, TlsMode mode, boolean verifyPeer, RecordingLogger log,
            MemoryDevice export) throws IOException {
        NbdServer.Builder builder = NbdServer.builder().export("", export).logger(log).tcp(InetAddress.getByName("127.0.0.1"), 0);
        if (context != null) builder.tls(context, mode).tlsVerifyPeer(verifyPeer);
        return builder;
    }

    private static MemoryDevice exportWithData(byte[] data) throws IOException {
        new Random(3).nextBytes(data);
        MemoryDevice export = new MemoryDevice(data.length);
        export.write(ByteBuffer.wrap(data), 0, false);
        return export;
    }

    private static String uri(NbdServer server, String scheme) {
        int port = ((InetSocketAddress) server.address()).getPort();
        return scheme + "://localhost:" + port + "/" + (scheme.equals("nbds") ? "?tls-certificates=" + certs.all : "");
    }

    private static void awaitLogged(RecordingLogger log, String text) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (log.count(text) == 0 && System.nanoTime() < deadline) Thread.sleep(20);
        assertTrue(log.count(text) > 0, "not logged within 30 s: " + text + "; log: " + log.entries());
    }

    /** The reader thread of a stopped warm-up ends once its pipe is closed, just after the warm-up thread. */
    private static void awaitNoWarmupThreads() throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!warmupThreads().isEmpty() && System.nanoTime() < deadline) Thread.sleep(20);
        assertEquals(List.of(), warmupThreads());
    }

    private static List<String> warmupThreads() {
        return Thread.getAllStackTraces().keySet().stream().filter(Thread::isAlive).map(Thread::getName)
                .filter(name -> name.startsWith("nbd-tls-warmup")).collect(Collectors.toList());
    }

    @ParameterizedTest
    @ValueSource(strings = {"pkcs1", "pkcs8", "verify-peer"})
    void warmUpFinishesWithEachServerKeyAndClientsAreServed(String setup) throws Exception {
        boolean verifyPeer = setup.equals("verify-peer");
        Path dir = setup.equals("pkcs8") ? certs.pkcs8Server : certs.all;
        RecordingLogger log = new RecordingLogger(null, Level.DEBUG);
        byte[] data = new byte[SIZE];
        try (NbdServer server = start(TlsCertificates.serverContext(dir, verifyPeer), TlsMode.REQUIRE, verifyPeer, log,
                exportWithData(data))) {
            awaitLogged(log, "TLS warm-up: sent 64 MiB");
            assertEquals(0, log.count("TLS warm-up failed"), log.entries().toString());
            try (NbdClient client = NbdClient.connect(uri(server, "nbds"))) {
                ByteBuffer back = ByteBuffer.allocate(SIZE);
                client.read(back, 0);
                assertArrayEquals(data, back.array());
            }
        }
    }

    @Test
    void failedWarmUpIsLoggedAndTheServerServesAllTheSame() throws Exception {
        // A context without a certificate: no TLS session can start, so the warm-up fails; plain clients of an
        // "on" server do not need TLS.
        SSLContext noCertificate = SSLContext.getInstance("TLS");
        noCertificate.init(null, null, null);
        RecordingLogger log = new RecordingLogger(null, Level.DEBUG);
        byte[] data = new byte[SIZE];
        try (NbdServer server = start(noCertificate, TlsMode.ON, false, log, exportWithData(data))) {
            awaitLogged(log, "TLS warm-up failed");
            try (NbdClient client = NbdClient.connect(uri(server, "nbd"))) {
                ByteBuffer back = ByteBuffer.allocate(SIZE);
                client.read(back, 0);
                assertArrayEquals(data, back.array());
            }
        }
        assertEquals(List.of(), warmupThreads());
    }

    @Test
    void aClientsTlsSessionStopsTheWarmUp() throws Exception {
        RecordingLogger log = new RecordingLogger(null, Level.DEBUG);
        byte[] data = new byte[SIZE];
        try (NbdServer server = builder(TlsCertificates.serverContext(certs.all, false), TlsMode.REQUIRE, false, log,
                exportWithData(data)).tlsWarmupBytes(ENDLESS).start()) {
            assertEquals(List.of("nbd-tls-warmup"), warmupThreads().stream().filter(n -> n.equals("nbd-tls-warmup"))
                    .collect(Collectors.toList()));
            try (NbdClient client = NbdClient.connect(uri(server, "nbds"))) {
                awaitLogged(log, "TLS warm-up: stopped after");
                ByteBuffer back = ByteBuffer.allocate(SIZE);
                client.read(back, 0);
                assertArrayEquals(data, back.array());
            }
            awaitNoWarmupThreads();
            assertEquals(0, log.count("TLS warm-up failed"), log.entries().toString());
        }
    }

    @Test
    void closeStopsTheWarmUp() throws Exception {
        RecordingLogger log = new RecordingLogger(null, Level.DEBUG);
        NbdServer server = builder(TlsCertificates.serverContext(certs.all, false), TlsMode.REQUIRE, false, log,
                exportWithData(new byte[SIZE])).tlsWarmupBytes(ENDLESS).start();
        Thread.sleep(200);
        assertTrue(warmupThreads().contains("nbd-tls-warmup"), "the warm-up is not running: " + log.entries());
        server.close();
        assertEquals(List.of(), warmupThreads(), "warm-up threads still running after close()");
        assertEquals(0, log.count("TLS warm-up failed"), "stopping is not a failure: " + log.entries());
    }

    @Test
    void serverWithoutTlsHasNoWarmUp() throws Exception {
        RecordingLogger log = new RecordingLogger(null, Level.DEBUG);
        try (NbdServer server = start(null, TlsMode.OFF, false, log, exportWithData(new byte[SIZE]))) {
            try (NbdClient client = NbdClient.connect(uri(server, "nbd"))) {
                client.read(ByteBuffer.allocate(4096), 0);
            }
            assertEquals(List.of(), warmupThreads());
            assertEquals(0, log.count("TLS warm-up"));
        }
    }
}

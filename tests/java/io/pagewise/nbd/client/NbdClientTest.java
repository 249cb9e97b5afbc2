package io.pagewise.nbd.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.CacheMode;
import io.pagewise.Extent;
import io.pagewise.device.ZeroFlag;
import io.pagewise.nbd.NbdException;
import io.pagewise.nbd.NbdUri;
import io.pagewise.nbd.TestServer;
import io.pagewise.testing.NbdChildServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** {@link NbdClient} against the pagewise server and nbdkit: negotiation, every command, errors. */
@Timeout(60)
class NbdClientTest {
    private static final int MiB = 1 << 20;

    @TempDir
    Path dir;

    @Test
    void parsesTcpAndUnixUris() {
        NbdUri tcp = NbdUri.parse("nbd://127.0.0.1:10810/disk");
        // Unresolved: parsing looks nothing up (the host is resolved on connect).
        assertEquals(InetSocketAddress.createUnresolved("127.0.0.1", 10810), tcp.address());
        assertEquals("disk", tcp.exportName());
        assertEquals(10809, ((InetSocketAddress) NbdUri.parse("nbd://[::1]/").address()).getPort());
        NbdUri unix = NbdUri.parse("nbd+unix:///my%20disk?socket=/tmp/a%20b.sock");
        assertEquals(UnixDomainSocketAddress.of("/tmp/a b.sock"), unix.address());
        assertEquals("my disk", unix.exportName());
        assertThrows(IllegalArgumentException.class, () -> NbdUri.parse("nbd+unix:///disk"));
        assertThrows(IllegalArgumentException.class, () -> NbdUri.parse("http://host/disk"));
    }

    @Test
    void anUnknownHostIsAnIOExceptionOnConnect() {
        // .invalid never resolves (RFC 6761); the JDK's connect would throw the unchecked UnresolvedAddressException.
        IOException e = assertThrows(IOException.class, () -> NbdClient.connect("nbd://no-such-host.invalid/disk"));
        assertTrue(e.getMessage().contains("unknown host no-such-host.invalid"), e.getMessage());
    }

    @Test
    void parsesTlsUrisWithLibnbdQueries() {
        NbdUri tcp = NbdUri.parse("nbds://localhost:10811/disk?tls-certificates=/etc/certs%20dir");
        assertTrue(tcp.tls());
        assertEquals(Path.of("/etc/certs dir"), tcp.tlsCertificates());
        assertEquals("localhost", ((InetSocketAddress) tcp.address()).getHostString());
        NbdUri unix = NbdUri.parse("nbds+unix:///disk?socket=/tmp/s.sock&tls-certificates=/c");
        assertTrue(unix.tls());
        assertEquals(UnixDomainSocketAddress.of("/tmp/s.sock"), unix.address());
        assertEquals(Path.of("/c"), unix.tlsCertificates());
        NbdUri defaults = NbdUri.parse("nbds://host/disk");
        assertTrue(defaults.tls());
        assertEquals(null, defaults.tlsCertificates());
        assertFalse(NbdUri.parse("nbd://host/disk").tls());
        IllegalArgumentException psk = assertThrows(IllegalArgumentException.class,
                () -> NbdUri.parse("nbds://host/disk?tls-psk-file=/keys.psk"));
        assertTrue(psk.getMessage().contains("tls-psk-file is not supported"), psk.getMessage());
        IllegalArgumentException plain = assertThrows(IllegalArgumentException.class,
                () -> NbdUri.parse("nbd://host/disk?tls-certificates=/c"));
        assertTrue(plain.getMessage().contains("needs a TLS scheme"), plain.getMessage());

        NbdUri named = NbdUri.parse("nbds+unix:///?socket=/s&tls-hostname=disk.example&tls-verify-peer=false&tls-type=X509");
        assertEquals("disk.example", named.tlsHostname());
        assertFalse(named.tlsVerifyPeer());
        assertTrue(defaults.tlsVerifyPeer());
        assertEquals(null, defaults.tlsHostname());
        for (String yes : new String[] {"1", "true", "YES", "on"}) {
            assertTrue(NbdUri.parse("nbds://h/?tls-verify-peer=" + yes).tlsVerifyPeer(), yes);
        }
        for (String no : new String[] {"0", "false", "No", "off"}) {
            assertFalse(NbdUri.parse("nbds://h/?tls-verify-peer=" + no).tlsVerifyPeer(), no);
        }
        String[][] refused = {
            {"nbds://h/?tls-verify-peer=maybe", "tls-verify-peer=maybe is not a boolean"},
            {"nbds://h/?tls-hostname=", "tls-hostname= names no host"},
            {"nbd://h/?tls-hostname=h", "tls-hostname needs a TLS scheme"},
            {"nbd://h/?tls-verify-peer=false", "tls-verify-peer needs a TLS scheme"},
            {"nbds://h/?tls-username=alice", "tls-username is not supported"},
            {"nbds://h/?tls-type=psk", "tls-type=psk is not supported"},
            {"nbds://h/?tls-type=anon", "tls-type=anon is not supported"},
            {"nbd://h/disk?sockett=/s", "unknown query parameter 'sockett'"},
            {"nbd+unix:///?socket=/s&x-mine=1", "unknown query parameter 'x-mine'"},
            {"nbd://h/disk?socket=/s", "socket= is for nbd+unix://"},
            {"nbd://127.0.0.1:notaport/", "port 'notaport' is not a number"},
            {"nbds://h:99999/", "port 99999 is out of range"},
            {"nbd:///disk", "names no host"},
            {"nbd://h:0/", "port 0 is out of range"},
            {"nbd:/h/disk", "must begin with nbd://"},
            {"nbd:h", "must begin with nbd://"},
            {"nbds+unix:/?socket=/s", "must begin with nbds+unix://"},
        };
        for (String[] c : refused) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> NbdUri.parse(c[0]), c[0]);
            assertTrue(e.getMessage().contains(c[1]) && e.getMessage().contains(c[0]), e.getMessage());
        }
    }

    @Test
    void negotiatesWithThePagewiseServerAndRoundTripsEveryCommand() throws Exception {
        try (TestServer server = TestServer.start(dir, 16 * MiB, CacheMode.WRITEBACK);
             NbdClient nbd = NbdClient.connect(server.uri(), 4)) {
            ExportInfo info = nbd.info();
            assertEquals(16 * MiB, nbd.size());
            assertTrue(info.structuredReplies() && info.canExtents() && info.canMultiConn(), info.toString());
            assertEquals(4, nbd.connectionCount());
            assertEquals(4096, info.preferredBlock());
            assertEquals(64 * MiB, info.maximumPayload());

            byte[] data = new byte[256 * 1024];
            new Random(1).nextBytes(data);
            List<CompletableFuture<Void>> writes = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                writes.add(nbd.writeAsync(ByteBuffer.wrap(data), (long) i * MiB, i == 7));
            }
            for (CompletableFuture<Void> w : writes) NbdClient.await(w);
            nbd.flush();

            ByteBuffer back = ByteBuffer.allocateDirect(data.length);
            assertEquals(data.length, nbd.read(back, 3 * MiB));
            assertEquals(ByteBuffer.wrap(data), back.flip());

            nbd.zero(3 * MiB, data.length, ZeroFlag.TRIM);
            nbd.read(back.clear(), 3 * MiB);
            assertEquals(ByteBuffer.allocate(data.length), back.flip());

            // A range spanning data and a hole arrives with the hole as zeros.
            ByteBuffer span = ByteBuffer.allocate(2 * data.length);
            nbd.read(span, MiB);
            span.flip();
            assertEquals(ByteBuffer.wrap(data), span.duplicate().limit(data.length));
            assertEquals(ByteBuffer.allocate(data.length), span.duplicate().position(data.length));

            List<Extent> map = nbd.extents(0, 16 * MiB);
            assertEquals(0, map.get(0).offset());
            assertFalse(map.get(0).hole(), map.toString());
            assertTrue(map.stream().anyMatch(Extent::hole), map.toString());

            nbd.trim(0, data.length);
        }
    }

    @Test
    void serverErrorsNameTheCommandAndRange() throws Exception {
        try (TestServer server = TestServer.start(dir, 4 * MiB, CacheMode.WRITEBACK, true, null);
             NbdClient nbd = NbdClient.connect(server.uri())) {
            assertTrue(nbd.info().isReadOnly());
            NbdException e = assertThrows(NbdException.class,
                    () -> nbd.write(ByteBuffer.allocate(4096), 8192, false));
            assertEquals("WRITE", e.command());
            assertEquals(8192, e.offset());
            assertTrue(e.getMessage().contains("WRITE at 8192 (+4096)"), e.getMessage());
        }
        try (NbdChildServer nbdkit = NbdChildServer.nbdkit(dir, "--filter=error", "memory", "1M",
                "error-pread=EIO", "error-pread-rate=1");
             NbdClient nbd = NbdClient.connect(nbdkit.uri())) {
            NbdException e = assertThrows(NbdException.class, () -> nbd.read(ByteBuffer.allocate(4096), 65536));
            assertEquals("READ", e.command());
            assertEquals(5, e.error());
            assertTrue(e.getMessage().contains("READ at 65536 (+4096) failed: EIO"), e.getMessage());
        }
    }

    @Test
    void aWriteLongerThanTheServersPayloadFailsItsFuture() throws Exception {
        try (TestServer server = TestServer.start(dir, MiB, CacheMode.WRITEBACK);
             NbdClient nbd = NbdClient.connect(server.uri(), 1)) {
            ByteBuffer tooLong = ByteBuffer.allocate(nbd.info().maximumPayload() + 1);
            CompletableFuture<Void> write = nbd.writeAsync(tooLong, 0, false);
            java.util.concurrent.ExecutionException e = assertThrows(java.util.concurrent.ExecutionException.class,
                    () -> write.get(10, java.util.concurrent.TimeUnit.SECONDS));
            assertTrue(e.getCause() instanceof io.pagewise.device.DeviceException, e.getCause().toString());
            assertEquals(io.pagewise.device.DeviceException.EINVAL,
                    ((io.pagewise.device.DeviceException) e.getCause()).errno());
            assertEquals(0, tooLong.position(), "a failed write leaves the position alone");
        }
    }

    /**
     * A blocking read or write interrupted while its request is at the server waits for the reply: it does not return
     * while the request still uses the buffer. The interrupt status stays set.
     */
    @Test
    void anInterruptWhileWaitingForAReplyDoesNotLeaveTheBufferInUse() throws Exception {
        io.pagewise.backends.MemoryDevice memory = new io.pagewise.backends.MemoryDevice((int) MiB);
        byte[] data = new byte[4096];
        new Random(6).nextBytes(data);
        memory.write(ByteBuffer.wrap(data), 0, false);
        io.pagewise.device.BlockDevice slow = io.pagewise.filters.FaultFilter.wrap(memory)
                .delay(java.time.Duration.ofMillis(300), java.time.Duration.ofMillis(300)).build();
        try (io.pagewise.nbd.server.NbdServer server = io.pagewise.nbd.server.NbdServer.builder().export("", "slow", slow)
                .unixSocket(dir.resolve("slow.sock")).start();
             NbdClient nbd = NbdClient.connect(server.uri(""), 1)) {
            Thread caller = Thread.currentThread();
            for (boolean reading : new boolean[] {true, false}) {
                ByteBuffer buffer = reading ? ByteBuffer.allocate(4096) : ByteBuffer.wrap(new byte[4096]);
                CompletableFuture<Void> interrupter = CompletableFuture.runAsync(() -> {
                    java.util.concurrent.locks.LockSupport.parkNanos(100_000_000L);
                    caller.interrupt();
                });
                try {
                    if (reading) {
                        assertEquals(4096, nbd.read(buffer, 0));
                    } else {
                        nbd.write(buffer, 8192, false);
                    }
                    assertTrue(Thread.currentThread().isInterrupted(), "the interrupt status is kept");
                } finally {
                    interrupter.join();
                    Thread.interrupted();
                }
                assertEquals(4096, buffer.position(), "the request ended, and moved the position, before the call returned");
                if (reading) assertEquals(ByteBuffer.wrap(data), buffer.flip());
            }
        }
    }

    @Test
    void anInterruptedCallerFailsAloneAndTheConnectionStays() throws Exception {
        try (TestServer server = TestServer.start(dir, MiB, CacheMode.WRITEBACK);
             NbdClient nbd = NbdClient.connect(server.uri(), 1)) {
            byte[] data = new byte[4096];
            new Random(5).nextBytes(data);
            nbd.write(ByteBuffer.wrap(data), 0, false);
            Thread.currentThread().interrupt();
            try {
                java.io.InterruptedIOException e = assertThrows(java.io.InterruptedIOException.class,
                        () -> nbd.read(ByteBuffer.allocate(4096), 0));
                assertTrue(e.getMessage().contains("interrupted"), e.getMessage());
                assertTrue(Thread.currentThread().isInterrupted(), "the interrupt status is kept");
            } finally {
                Thread.interrupted();
            }
            // The one connection is still up, for this thread and any other.
            ByteBuffer back = ByteBuffer.allocate(4096);
            assertEquals(4096, nbd.read(back, 0));
            assertEquals(ByteBuffer.wrap(data), back.flip());
            CompletableFuture<Integer> other = CompletableFuture.supplyAsync(() -> {
                try {
                    return nbd.read(ByteBuffer.allocate(4096), 0);
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
            assertEquals(4096, other.get(30, java.util.concurrent.TimeUnit.SECONDS));
        }
    }

    @Test
    void unknownExportIsRefusedByName() throws Exception {
        try (TestServer server = TestServer.start(dir, MiB, CacheMode.WRITEBACK)) {
            IOException e = assertThrows(IOException.class, () -> NbdClient.connect(server.server.uri("nosuch")));
            assertTrue(e.getMessage().contains("'nosuch'") && e.getMessage().contains("no such export"), e.getMessage());
        }
    }

    @Test
    void worksWithoutStructuredRepliesAndWithoutFixedNewstyle() throws Exception {
        byte[] data = new byte[65536];
        new Random(2).nextBytes(data);
        // --no-sr: simple replies only; --mask-handshake=0: old newstyle, so only EXPORT_NAME is possible.
        for (String[] args : List.of(new String[] {"--no-sr", "memory", "1M"},
                new String[] {"--mask-handshake=0", "memory", "1M"})) {
            try (NbdChildServer nbdkit = NbdChildServer.nbdkit(dir, args);
                 NbdClient nbd = NbdClient.connect(nbdkit.uri())) {
                assertFalse(nbd.info().structuredReplies(), String.join(" ", args));
                assertEquals(MiB, nbd.size());
                nbd.write(ByteBuffer.wrap(data), 4096, false);
                ByteBuffer back = ByteBuffer.allocate(data.length);
                assertEquals(data.length, nbd.read(back, 4096));
                assertEquals(ByteBuffer.wrap(data), back.flip(), String.join(" ", args));
                assertEquals(List.of(new Extent(0, MiB, false)), nbd.extents(0, MiB), "all data without BLOCK_STATUS");
            }
        }
    }

    @Test
    void lostConnectionFailsRequestsInFlightWithTheirOffsets() throws Exception {
        NbdChildServer nbdkit = NbdChildServer.nbdkit(dir, "--filter=delay", "memory", "64M", "rdelay=2");
        try (NbdClient nbd = NbdClient.connect(nbdkit.uri())) {
            CompletableFuture<Integer> read = nbd.readAsync(ByteBuffer.allocate(4096), 12288);
            Thread.sleep(300);
            nbdkit.kill();
            IOException e = assertThrows(IOException.class, () -> NbdClient.await(read));
            assertTrue(e.getMessage().contains("READ at 12288 (+4096)"), e.getMessage());
        } finally {
            nbdkit.close();
        }
    }

    @Test
    void honoursBlockSizesAndOpensOneConnectionWithoutMultiConn() throws Exception {
        try (NbdChildServer nbdkit = NbdChildServer.nbdkit(dir, "--filter=blocksize-policy", "--filter=multi-conn",
                "memory", "4M", "blocksize-minimum=512", "blocksize-preferred=16384", "blocksize-maximum=65536",
                "blocksize-error-policy=error", "multi-conn-mode=disable");
             NbdClient nbd = NbdClient.connect(nbdkit.uri(), 4)) {
            assertEquals(512, nbd.info().minimumBlock());
            assertEquals(16384, nbd.info().preferredBlock());
            assertEquals(65536, nbd.info().maximumPayload());
            assertFalse(nbd.info().canMultiConn());
            assertEquals(1, nbd.connectionCount());
            assertThrows(IllegalArgumentException.class, () -> nbd.readAsync(ByteBuffer.allocate(65536 + 512), 0));
            // A range outside the export is an I/O error (EINVAL), as a device answers it, not an argument error.
            io.pagewise.device.DeviceException past = assertThrows(io.pagewise.device.DeviceException.class,
                    () -> nbd.write(ByteBuffer.allocate(512), (4 << 20) - 256));
            assertEquals(io.pagewise.device.DeviceException.EINVAL, past.errno(), past.getMessage());
            assertTrue(past.getMessage().contains("outside the export"), past.getMessage());
            java.util.concurrent.ExecutionException trim = assertThrows(java.util.concurrent.ExecutionException.class,
                    () -> nbd.trimAsync(4 << 20, 512).get());
            assertTrue(trim.getCause() instanceof io.pagewise.device.DeviceException, trim.getCause().toString());
            assertThrows(io.pagewise.device.DeviceException.class, () -> nbd.write(ByteBuffer.allocate(3 * 65536), 4 << 20));

            // The blocking forms split what is longer than the maximum into requests the server takes.
            byte[] data = new byte[3 * 65536 + 512];
            new java.util.Random(9).nextBytes(data);
            ByteBuffer src = ByteBuffer.wrap(data);
            nbd.write(src, 4096);
            assertEquals(data.length, src.position());
            ByteBuffer back = ByteBuffer.allocate(data.length + 10).position(10);
            assertEquals(data.length, nbd.read(back, 4096));
            assertEquals(back.limit(), back.position());
            assertArrayEquals(data, java.util.Arrays.copyOfRange(back.array(), 10, back.limit()));
            ByteBuffer whole = ByteBuffer.allocate(data.length);
            nbd.readFully(whole, 4096);
            assertArrayEquals(data, whole.array());
            ByteBuffer tail = ByteBuffer.allocate(2 * 65536 + 512);
            assertEquals(65536, nbd.read(tail, nbd.size() - 65536), "short only at the end of the export");
            ByteBuffer across = ByteBuffer.allocate(2 * 65536);
            assertThrows(java.io.EOFException.class, () -> nbd.readFully(across, nbd.size() - 65536));
        }
    }
}

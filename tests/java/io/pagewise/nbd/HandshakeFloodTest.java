package io.pagewise.nbd;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.backends.MemoryDevice;
import io.pagewise.nbd.client.NbdClient;
import io.pagewise.nbd.server.NbdServer;
import io.pagewise.testing.ExternalTools;
import io.pagewise.testing.RecordingLogger;
import java.io.IOException;
import java.net.InetAddress;
import java.net.SocketAddress;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A flood of idle connections: 500 opened and left silent before the handshake must not keep out a real client.
 * With the default limits (64 handshakes, 64 connections in transmission) nbdinfo and our NbdClient are served
 * while the 500 sockets are still open, and the server's connection threads stay within the handshake bound.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class HandshakeFloodTest {
    private static final int FLOOD = 500;
    private static final int SIZE = 4 << 20;

    @TempDir
    Path dir;

    @ParameterizedTest
    @ValueSource(strings = {"unix", "tcp"})
    void aRealClientIsServedWhile500SilentConnectionsAreOpen(String transport) throws Exception {
        ExternalTools.require("nbdinfo");
        RecordingLogger log = new RecordingLogger(null, System.Logger.Level.INFO);
        MemoryDevice disk = new MemoryDevice(SIZE);
        // The handshake timeout is not what lets the client in: no flood connection times out during the test.
        NbdServer.Builder builder = NbdServer.builder().export("", disk).logger(log).handshakeTimeout(Duration.ofMinutes(5));
        if (transport.equals("unix")) {
            builder.unixSocket(dir.resolve("nbd.sock"));
        } else {
            builder.tcp(InetAddress.getLoopbackAddress(), 0);
        }
        List<SocketChannel> flood = new ArrayList<>();
        try (NbdServer server = builder.start()) {
            for (int i = 0; i < FLOOD; i++) flood.add(silentConnection(server.address()));
            awaitTakenOffTheListenQueue(server, FLOOD);

            // Generous bounds, not measurements: before the fix nbdinfo failed at once (docs/SERVER.md has the timings).
            ExternalTools.Result info = ExternalTools.run(20, "nbdinfo", "--size", server.uri());
            info.assertOk("nbdinfo --size under a flood of " + FLOOD + " silent connections");
            assertEquals(String.valueOf(SIZE), info.stdout().trim());
            assertTimeoutPreemptively(Duration.ofSeconds(20), () -> {
                try (NbdClient client = NbdClient.connect(server.uri())) {
                    byte[] data = {3, 1, 4, 1, 5};
                    client.write(ByteBuffer.wrap(data), 4096, false);
                    ByteBuffer back = ByteBuffer.allocate(data.length);
                    client.read(back, 4096);
                    assertArrayEquals(data, back.array());
                }
            });

            // Only the connections admitted to transmission (nbdinfo's and ours) got past the handshake.
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (server.transmittingCount() > 0 && System.nanoTime() < deadline) Thread.sleep(10);
            assertEquals(0, server.transmittingCount());
            // The transmission threads of nbdinfo's and our connection end just after they leave the count.
            long threads = connectionThreads();
            while (threads > NbdServer.DEFAULT_MAX_HANDSHAKES && System.nanoTime() < deadline) {
                Thread.sleep(10);
                threads = connectionThreads();
            }
            assertTrue(threads <= NbdServer.DEFAULT_MAX_HANDSHAKES,
                    threads + " connection threads with no connection in transmission; the handshake bound is "
                            + NbdServer.DEFAULT_MAX_HANDSHAKES);
            assertTrue(server.stats().droppedHandshakes() >= FLOOD - NbdServer.DEFAULT_MAX_HANDSHAKES,
                    server.stats().droppedHandshakes() + " dropped");
            assertTrue(server.connectionCount() <= NbdServer.DEFAULT_MAX_HANDSHAKES);
            assertEquals(FLOOD + 2, server.stats().connections(), "every connection was accepted");
        } finally {
            for (SocketChannel channel : flood) channel.close();
        }
    }

    /** Connects and sends nothing: the server's greeting stays unread in the socket buffer. */
    private static SocketChannel silentConnection(SocketAddress address) throws IOException {
        SocketChannel channel = address instanceof UnixDomainSocketAddress
                ? SocketChannel.open(StandardProtocolFamily.UNIX) : SocketChannel.open();
        channel.connect(address);
        return channel;
    }

    /** Waits (at most 10 s) until the server has accepted count connections; the test checks the count later. */
    private static void awaitTakenOffTheListenQueue(NbdServer server, int count) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (server.stats().connections() < count && System.nanoTime() < deadline) Thread.sleep(10);
    }

    /** The server's threads that serve connections, in the handshake or in transmission. */
    private static long connectionThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.isAlive() && t.getName().startsWith("nbd-connection-")).count();
    }
}

package io.pagewise.nbd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.backends.MemoryDevice;
import io.pagewise.nbd.server.NbdServer;
import io.pagewise.testing.RecordingLogger;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A client that asks for an export with GO and never reads the replies: when the socket's buffer fills just as GO's
 * own replies are written, the connection is already admitted to transmission, and its handshake slot was held
 * until those writes ended, that is for ever, while the accept loop waited for a slot. The handshake timeout holds
 * until GO's last reply is sent. Where the buffer fills depends on the kernel, so the test walks the size of what
 * the client makes the server write before GO, in steps smaller than GO's own replies.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class StalledGoReplyTest {
    private static final long IHAVEOPT = 0x49484156454F5054L;
    private static final int OPT_INFO = 6;
    private static final int OPT_GO = 7;
    private static final int INFO_NAME = 1;
    private static final int INFO_DESCRIPTION = 2;

    @TempDir
    Path dir;

    @Test
    void aClientThatDoesNotReadGosRepliesIsTimedOut() throws Exception {
        String description = "d".repeat(4000);
        Path socket = dir.resolve("s");
        RecordingLogger log = new RecordingLogger("stalled-go", System.Logger.Level.DEBUG);
        try (NbdServer server = NbdServer.builder().export("x", description, new MemoryDevice(1 << 20))
                .unixSocket(socket).logger(log).handshakeTimeout(Duration.ofSeconds(1)).start()) {
            SocketChannel stuck = null;
            for (int before = 40_000; before <= 400_000 && stuck == null; before += 1500) {
                long handshakes = server.stats().handshakes();
                SocketChannel raw = open(socket);
                askInfoAbout(raw, before);
                go(raw, "x");
                long until = System.nanoTime() + 200_000_000L;
                while (server.transmittingCount() == 0 && System.nanoTime() < until) Thread.sleep(2);
                Thread.sleep(30); // GO's replies written (the handshake counted), or stuck writing them
                // Admitted to transmission, its handshake not completed: stuck in GO's replies.
                if (server.transmittingCount() == 1 && server.stats().handshakes() == handshakes) {
                    stuck = raw;
                } else {
                    raw.close();
                    awaitNoTransmitting(server);
                }
            }
            assertTrue(stuck != null, "setup: no size left GO's replies unsent (the kernel's buffers are unusual)");
            try (SocketChannel held = stuck) {
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
                while (server.transmittingCount() > 0 && System.nanoTime() < deadline) Thread.sleep(20);
                assertEquals(0, server.transmittingCount(), "the connection stuck in GO's replies is timed out");
            }
        }
    }

    private static SocketChannel open(Path socket) throws IOException {
        SocketChannel raw = SocketChannel.open(StandardProtocolFamily.UNIX);
        raw.connect(UnixDomainSocketAddress.of(socket));
        ByteBuffer greeting = ByteBuffer.allocate(18);
        while (greeting.hasRemaining()) raw.read(greeting);
        raw.write(ByteBuffer.allocate(4).putInt(0, 3)); // fixed newstyle, no zeroes
        return raw;
    }

    /** INFO options for missing exports whose error replies come to about bytes in all. */
    private static void askInfoAbout(SocketChannel raw, int bytes) throws IOException {
        int each = 4000;
        for (int left = bytes; left > 0; left -= each) {
            int nameLength = Math.max(1, Math.min(each, left) - 40);
            option(raw, OPT_INFO, "n" + "m".repeat(nameLength - 1), new int[0]);
        }
    }

    private static void go(SocketChannel raw, String name) throws IOException {
        option(raw, OPT_GO, name, new int[] {INFO_NAME, INFO_DESCRIPTION});
    }

    private static void option(SocketChannel raw, int code, String name, int[] infos) throws IOException {
        byte[] n = name.getBytes(StandardCharsets.UTF_8);
        ByteBuffer b = ByteBuffer.allocate(16 + 4 + n.length + 2 + 2 * infos.length);
        b.putLong(IHAVEOPT).putInt(code).putInt(4 + n.length + 2 + 2 * infos.length).putInt(n.length).put(n)
                .putShort((short) infos.length);
        for (int info : infos) b.putShort((short) info);
        b.flip();
        while (b.hasRemaining()) raw.write(b);
    }

    private static void awaitNoTransmitting(NbdServer server) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (server.transmittingCount() > 0 && System.nanoTime() < deadline) Thread.sleep(2);
    }
}

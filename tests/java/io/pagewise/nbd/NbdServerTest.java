package io.pagewise.nbd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.backends.MemoryDevice;
import io.pagewise.device.BlockDevice;
import io.pagewise.filters.ReadOnlyFilter;
import io.pagewise.nbd.client.NbdClient;
import io.pagewise.nbd.server.NbdServer;
import io.pagewise.nbd.wire.Protocol;
import io.pagewise.testing.RecordingLogger;
import java.io.EOFException;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The embedding API: start on a free TCP port, report the address and URI, stop gracefully. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class NbdServerTest {
    private static ByteBuffer read(SocketChannel channel, int n) throws IOException {
        ByteBuffer buffer = ByteBuffer.allocate(n);
        while (buffer.hasRemaining()) {
            if (channel.read(buffer) < 0) throw new EOFException();
        }
        return buffer.flip();
    }

    @Test
    void startsOnAFreePortAndStopsAfterAnsweringWhatItRead() throws Exception {
        MemoryDevice memory = new MemoryDevice(4 << 20);
        NbdServer server = NbdServer.builder().export("disk", memory).tcp(InetAddress.getLoopbackAddress(), 0)
                .start();
        int port = ((InetSocketAddress) server.address()).getPort();
        assertTrue(port > 0);
        assertEquals("nbd://127.0.0.1:" + port + "/disk", server.uri());
        assertEquals("nbd://127.0.0.1:" + port + "/a%20b", server.uri("a b"));

        try (SocketChannel channel = SocketChannel.open(server.address())) {
            read(channel, 18);
            channel.write(ByteBuffer.allocate(4).putInt(3).flip());
            byte[] name = "disk".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
            channel.write(ByteBuffer.allocate(16 + name.length).putLong(0x49484156454F5054L).putInt(1)
                    .putInt(name.length).put(name).flip());
            assertEquals(4 << 20, read(channel, 10).getLong());
            // 64 writes pipelined; the server is stopped before the client has read a single reply
            int n = 64;
            ByteBuffer requests = ByteBuffer.allocate(n * (28 + 4096));
            for (int i = 0; i < n; i++) {
                requests.putInt(0x25609513).putShort((short) 0).putShort((short) 1).putLong(i).putLong(i * 4096L)
                        .putInt(4096).put(new byte[4096]);
            }
            requests.flip();
            while (requests.hasRemaining()) channel.write(requests);
            Thread stopper = new Thread(() -> {
                try {
                    server.close();
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
            // Wait until the server has executed them all, so that every one must be answered.
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (server.stats().ops(NbdCommand.WRITE) < n && System.nanoTime() < deadline) Thread.sleep(5);
            stopper.start();
            int answered = 0;
            try {
                while (true) {
                    ByteBuffer reply = read(channel, 16);
                    assertEquals(0x67446698, reply.getInt());
                    assertEquals(0, reply.getInt());
                    answered++;
                }
            } catch (EOFException | java.net.SocketException e) {
                // the server closed the connection after its last reply
            }
            assertEquals(n, answered);
            stopper.join();
        }
        assertTrue(server.isStopped());
        assertEquals(0, server.connectionCount());
        try (SocketChannel late = SocketChannel.open()) {
            assertFalse(tryConnect(late, server.address()), "still accepting after close");
        }
    }

    @Test
    void listSendsEachExportsNameAndDescription() throws Exception {
        try (NbdServer server = NbdServer.builder().export("", "the default disk", new MemoryDevice(1 << 20))
                .export("second", new ReadOnlyFilter(new MemoryDevice(1 << 20))).tcp(InetAddress.getLoopbackAddress(), 0)
                .start();
             SocketChannel channel = SocketChannel.open(server.address())) {
            read(channel, 18);
            channel.write(ByteBuffer.allocate(4).putInt(Protocol.CLIENT_FIXED_NEWSTYLE | Protocol.CLIENT_NO_ZEROES).flip());
            channel.write(ByteBuffer.allocate(16).putLong(Protocol.IHAVEOPT).putInt(Protocol.OPT_LIST).putInt(0).flip());
            java.util.List<String> replies = new java.util.ArrayList<>();
            while (true) {
                ByteBuffer head = read(channel, 20);
                assertEquals(Protocol.OPTION_REPLY_MAGIC, head.getLong());
                assertEquals(Protocol.OPT_LIST, head.getInt());
                int type = head.getInt();
                ByteBuffer data = read(channel, head.getInt());
                if (type == Protocol.REP_ACK) break;
                assertEquals(Protocol.REP_SERVER, type);
                byte[] name = new byte[data.getInt()];
                data.get(name);
                byte[] description = new byte[data.remaining()];
                data.get(description);
                replies.add(new String(name, java.nio.charset.StandardCharsets.UTF_8) + "|"
                        + new String(description, java.nio.charset.StandardCharsets.UTF_8));
            }
            assertEquals(java.util.List.of("|the default disk", "second|"), replies);
        }
    }

    /** A read-only export whose reads wait at a gate, counting how many are inside at once. */
    private static final class GatedExport implements BlockDevice {
        final java.util.concurrent.CountDownLatch gate = new java.util.concurrent.CountDownLatch(1);
        final java.util.concurrent.atomic.AtomicInteger inside = new java.util.concurrent.atomic.AtomicInteger();
        final java.util.concurrent.atomic.AtomicInteger mostInside = new java.util.concurrent.atomic.AtomicInteger();

        @Override
        public long size() {
            return 1 << 20;
        }

        @Override
        public void readFully(ByteBuffer dst, long offset) throws IOException {
            mostInside.accumulateAndGet(inside.incrementAndGet(), Math::max);
            try {
                if (!gate.await(20, TimeUnit.SECONDS)) throw new IOException("gate never opened");
            } catch (InterruptedException e) {
                throw new java.io.InterruptedIOException();
            } finally {
                inside.decrementAndGet();
            }
            while (dst.hasRemaining()) dst.put((byte) (offset & 0x7f));
        }
    }

    @Test
    void aConnectionRunsAsManyRequestsAtOnceAsItHasThreads() throws Exception {
        GatedExport export = new GatedExport();
        try (NbdServer server = NbdServer.builder().export("", export).tcp(InetAddress.getLoopbackAddress(), 0)
                .threads(3).start();
             NbdClient client = NbdClient.connect(server.uri())) {
            java.util.List<java.util.concurrent.CompletableFuture<Integer>> reads = new java.util.ArrayList<>();
            for (int i = 0; i < 8; i++) reads.add(client.readAsync(ByteBuffer.allocate(4096), i * 4096L));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (export.inside.get() < 3 && System.nanoTime() < deadline) Thread.sleep(5);
            assertEquals(3, export.inside.get(), "three threads should be executing reads");
            Thread.sleep(300);
            assertEquals(3, export.mostInside.get(), "more requests ran at once than the connection has threads");
            export.gate.countDown();
            for (java.util.concurrent.CompletableFuture<Integer> read : reads) NbdClient.await(read);
            assertEquals(3, export.mostInside.get());
        }
    }

    private static boolean tryConnect(SocketChannel channel, java.net.SocketAddress address) {
        try {
            return channel.connect(address);
        } catch (IOException e) {
            return false;
        }
    }

    @Test
    void aStoppingServerLeavesASocketFileThatAnotherServerCreatedSince(@TempDir Path dir) throws Exception {
        Path socket = dir.resolve("nbd.sock");
        RecordingLogger logA = new RecordingLogger("[server A] ", System.Logger.Level.INFO);
        NbdServer a = NbdServer.builder().export("", new MemoryDevice(1 << 20)).unixSocket(socket)
                .logger(logA).start();
        Files.delete(socket);
        try (NbdServer b = NbdServer.builder().export("", new MemoryDevice(1 << 20)).unixSocket(socket)
                .start()) {
            a.close();
            assertTrue(Files.exists(socket), "server A removed server B's socket file");
            assertEquals(1, logA.messages(System.Logger.Level.WARNING, "no longer the socket this server created").size(),
                    logA.entries().toString());
            try (SocketChannel channel = SocketChannel.open(UnixDomainSocketAddress.of(socket))) {
                assertEquals(0x4e42444d41474943L, read(channel, 18).getLong(), "B greets on its socket");
            }
        }
        assertFalse(Files.exists(socket), "B removes its own socket file when it stops");
    }
}

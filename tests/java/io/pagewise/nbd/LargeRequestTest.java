package io.pagewise.nbd;

import static io.pagewise.testing.TestData.random;
import static io.pagewise.testing.TestData.sparseFile;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.CacheMode;
import io.pagewise.backends.FileDevice;
import io.pagewise.device.BlockDevice;
import io.pagewise.nbd.client.NbdClient;
import io.pagewise.nbd.server.NbdServer;
import io.pagewise.nbd.server.ServerStats;
import io.pagewise.nbd.wire.Protocol;
import java.io.EOFException;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.net.StandardProtocolFamily;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * READ and WRITE payloads up to 64 MiB (nbdkit's limit; the NBD project's test client sends 48 MiB), sent by a raw
 * client that ignores the advertised maximum, with an in-flight budget far smaller than one request. Data is
 * compared byte for byte, and memory is checked with the server's own count of the payload bytes requests hold.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class LargeRequestTest {
    private static final int MiB = 1 << 20;
    private static final long SIZE = 160L * MiB;
    private static final long BUDGET = 4L * MiB;
    private static final int READ = 0;
    private static final int WRITE = 1;
    private static final int EINVAL = 22;

    @TempDir
    Path dir;

    @Test
    void advertisesSixtyFourMiBAsTheMaximumPayload() throws IOException {
        try (FileDevice export = FileDevice.open(image(), CacheMode.WRITEBACK, java.nio.file.StandardOpenOption.READ, java.nio.file.StandardOpenOption.WRITE);
             NbdServer server = server(export, 0);
             NbdClient client = NbdClient.connect(server.uri(), 1)) {
            assertEquals(64 * MiB, client.info().maximumPayload(), "NBD_INFO_BLOCK_SIZE maximum");
        }
    }

    @Test
    void readsAndWritesOf48And64MiBAreServedInPiecesOfTheConnectionsShare() throws IOException {
        Path file = image();
        try (FileDevice export = FileDevice.open(file, CacheMode.WRITEBACK, java.nio.file.StandardOpenOption.READ, java.nio.file.StandardOpenOption.WRITE);
             NbdServer server = server(export, 0);
             RawClient client = new RawClient(server)) {
            long offset = 8L * MiB + 512; // unaligned: pieces need not start on a block
            for (int size : new int[] {48 * MiB, 64 * MiB}) {
                byte[] data = random(size, size);
                assertEquals(0, client.write(offset, data), "WRITE of " + size);
                assertArrayEquals(data, fileBytes(file, offset, size), "the file after a WRITE of " + size);
                assertArrayEquals(data, client.read(offset, size), "READ of " + size);
                offset += 70L * MiB - 4096;
            }
            ServerStats stats = server.stats();
            assertEquals(0, stats.errors(NbdCommand.READ) + stats.errors(NbdCommand.WRITE));
            long share = BUDGET / 4; // the default per-connection share
            assertTrue(stats.peakPayloadBytesHeld() > 0 && stats.peakPayloadBytesHeld() <= share,
                    "requests held " + stats.peakPayloadBytesHeld() + " bytes of payload buffers; the share is " + share);
        }
    }

    @Test
    void aRequestWaitsForTheBudgetAndOneLargerThanItIsServedInPiecesOfIt() throws Exception {
        Path file = image();
        byte[] data = random(7, 48 * MiB);
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
            raf.seek(64L * MiB);
            raf.write(data);
        }
        // Each connection may hold the whole budget, so a request's piece is the whole budget.
        CountDownLatch open = new CountDownLatch(1);
        CountDownLatch writeEntered = new CountDownLatch(1);
        AtomicLong reads = new AtomicLong();
        try (HeldExport export = new HeldExport(FileDevice.open(file, CacheMode.WRITEBACK,
                        java.nio.file.StandardOpenOption.READ, java.nio.file.StandardOpenOption.WRITE),
                     reads::incrementAndGet, HeldExport.gate(writeEntered, open));
             NbdServer server = server(export, BUDGET);
             RawClient holder = new RawClient(server);
             RawClient waiter = new RawClient(server)) {
            try {
                holder.request(WRITE, 1, 0, (int) BUDGET);
                holder.send(ByteBuffer.wrap(random(8, (int) BUDGET)));
                assertTrue(writeEntered.await(30, TimeUnit.SECONDS), "the WRITE reached the export");
                assertEquals(BUDGET, server.stats().payloadBytesHeld(), "the WRITE holds the whole budget");

                waiter.request(READ, 2, 64L * MiB, data.length);
                Thread.sleep(300); // long enough for a READ that did not wait to reach the export
                assertEquals(0, reads.get(), "a READ started while the budget was all held");

                open.countDown();
                assertEquals(0, holder.reply(1));
                assertEquals(0, waiter.reply(2));
                assertArrayEquals(data, waiter.receive(data.length), "the READ, served in pieces of the budget");
            } finally {
                open.countDown(); // also when an assertion failed: the gated thread must not hold up the close
            }
            assertTrue(server.stats().peakPayloadBytesHeld() <= BUDGET,
                    "held " + server.stats().peakPayloadBytesHeld() + " bytes; the budget is " + BUDGET);
        }
    }

    @Test
    void overTheMaximumIsRefusedWithEinvalAndTheConnectionStaysUsable() throws IOException {
        Path file = image();
        int tooBig = Protocol.MAX_PAYLOAD + 1; // within the export: only the maximum is at fault
        try (FileDevice export = FileDevice.open(file, CacheMode.WRITEBACK, java.nio.file.StandardOpenOption.READ, java.nio.file.StandardOpenOption.WRITE);
             NbdServer server = server(export, 0);
             RawClient client = new RawClient(server)) {
            client.request(READ, 1, 0, tooBig);
            assertEquals(EINVAL, client.reply(1), "READ of 64 MiB + 1");
            client.request(WRITE, 2, 0, tooBig);
            client.send(ByteBuffer.wrap(random(3, tooBig)));
            assertEquals(EINVAL, client.reply(2), "WRITE of 64 MiB + 1, its payload consumed");
            assertArrayEquals(new byte[tooBig], fileBytes(file, 0, tooBig), "a refused WRITE writes nothing");
            byte[] small = random(4, 4096);
            assertEquals(0, client.write(12345, small));
            assertArrayEquals(small, client.read(12345, small.length));
            assertEquals(1, server.stats().errors(NbdCommand.READ));
            assertEquals(1, server.stats().errors(NbdCommand.WRITE));
            assertEquals(0, server.stats().protocolErrors());
        }
    }

    private Path image() throws IOException {
        return sparseFile(dir.resolve("image.raw"), SIZE);
    }

    /** A server with the small budget; perConnection 0 keeps the default share (a quarter of it). */
    private NbdServer server(BlockDevice export, long perConnection) throws IOException {
        NbdServer.Builder builder = NbdServer.builder().export("", export).unixSocket(dir.resolve("nbd.sock"))
                .maxInflightBytes(BUDGET).logger(new io.pagewise.testing.RecordingLogger("[server] ", System.Logger.Level.INFO));
        if (perConnection > 0) builder.maxInflightBytesPerConnection(perConnection);
        return builder.start();
    }

    private static byte[] fileBytes(Path file, long offset, int length) throws IOException {
        byte[] data = new byte[length];
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "r")) {
            raf.seek(offset);
            raf.readFully(data);
        }
        return data;
    }

    /** A client on a raw socket: EXPORT_NAME "", simple replies, and no notion of a maximum payload. */
    private static final class RawClient implements AutoCloseable {
        private final SocketChannel channel;

        RawClient(NbdServer server) throws IOException {
            channel = SocketChannel.open(StandardProtocolFamily.UNIX);
            channel.connect(server.address());
            ByteBuffer greeting = ByteBuffer.wrap(receive(18));
            assertEquals(0x4e42444d41474943L, greeting.getLong(), "NBDMAGIC");
            assertEquals(0x49484156454F5054L, greeting.getLong(), "IHAVEOPT");
            send(ByteBuffer.allocate(4).putInt(3).flip()); // FIXED_NEWSTYLE | NO_ZEROES
            send(ByteBuffer.allocate(16).putLong(0x49484156454F5054L).putInt(1).putInt(0).flip()); // EXPORT_NAME ""
            assertEquals(SIZE, ByteBuffer.wrap(receive(10)).getLong(), "export size");
        }

        void request(int type, long cookie, long offset, int length) throws IOException {
            send(ByteBuffer.allocate(28).putInt(0x25609513).putShort((short) 0).putShort((short) type)
                    .putLong(cookie).putLong(offset).putInt(length).flip());
        }

        /** Reads the simple reply for cookie; returns its error. */
        int reply(long cookie) throws IOException {
            ByteBuffer reply = ByteBuffer.wrap(receive(16));
            assertEquals(0x67446698, reply.getInt(), "simple reply magic");
            int error = reply.getInt();
            assertEquals(cookie, reply.getLong(), "cookie");
            return error;
        }

        int write(long offset, byte[] data) throws IOException {
            request(WRITE, 9, offset, data.length);
            send(ByteBuffer.wrap(data));
            return reply(9);
        }

        byte[] read(long offset, int length) throws IOException {
            request(READ, 10, offset, length);
            assertEquals(0, reply(10), "READ " + offset + "+" + length);
            return receive(length);
        }

        void send(ByteBuffer buffer) throws IOException {
            while (buffer.hasRemaining()) channel.write(buffer);
        }

        byte[] receive(int n) throws IOException {
            ByteBuffer buffer = ByteBuffer.allocate(n);
            while (buffer.hasRemaining()) {
                if (channel.read(buffer) < 0) throw new EOFException("server closed after " + buffer.position() + " of " + n);
            }
            return buffer.array();
        }

        @Override
        public void close() throws IOException {
            channel.close();
        }
    }
}

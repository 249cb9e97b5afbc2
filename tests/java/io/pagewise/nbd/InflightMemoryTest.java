package io.pagewise.nbd;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.CacheMode;
import io.pagewise.backends.FileDevice;
import io.pagewise.backends.MemoryDevice;
import io.pagewise.device.BlockDevice;
import io.pagewise.device.Capabilities;
import io.pagewise.device.Capability;
import io.pagewise.nbd.client.NbdClient;
import io.pagewise.nbd.server.NbdServer;
import io.pagewise.nbd.server.ServerStats;
import io.pagewise.nbd.wire.Protocol;
import io.pagewise.testing.ExternalTools;
import java.io.EOFException;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * --max-inflight-bytes holds the payload buffers of requests in flight, even for READs and WRITEs longer than the
 * whole budget: those are served piece by piece. Checked with the server's own count of the buffer bytes that
 * requests hold, with data compared byte for byte, through simple, structured and DF replies, and with failures in
 * the middle of such a request.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class InflightMemoryTest {
    private static final int MiB = 1 << 20;
    private static final long BUDGET = MiB;
    /** The default per-connection share: a quarter of the budget. */
    private static final long SHARE = BUDGET / 4;
    private static final int REQUEST = 32 * MiB;

    @TempDir
    Path dir;

    /** A 64 MiB file: a hole in [0, 8 MiB), random data in [8, 56 MiB), a hole after. */
    private byte[] image(Path file) throws IOException {
        byte[] expected = new byte[64 * MiB];
        byte[] data = new byte[48 * MiB];
        new Random(10).nextBytes(data);
        System.arraycopy(data, 0, expected, 8 * MiB, data.length);
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
            raf.setLength(expected.length);
            raf.seek(8 * MiB);
            raf.write(data);
        }
        return expected;
    }

    private static byte[] bytes(ByteBuffer buffer) {
        byte[] out = new byte[buffer.remaining()];
        buffer.duplicate().get(out);
        return out;
    }

    private static byte[] slice(byte[] data, int from, int length) {
        return java.util.Arrays.copyOfRange(data, from, from + length);
    }

    @Test
    void readsAndWritesLargerThanTheBudgetHoldAtMostTheConnectionsShare() throws Exception {
        Path file = dir.resolve("image.img");
        byte[] expected = image(file);
        try (FileDevice export = FileDevice.open(file, CacheMode.WRITEBACK, java.nio.file.StandardOpenOption.READ, java.nio.file.StandardOpenOption.WRITE);
             NbdServer server = NbdServer.builder().export("", export).unixSocket(dir.resolve("s.sock"))
                     .maxInflightBytes(BUDGET).start();
             NbdClient client = NbdClient.connect(server.uri(), 2)) {
            assertEquals(64 * MiB, client.info().maximumPayload(), "the advertised maximum");
            // Hole then data, and data then hole: structured replies with both kinds of chunk.
            for (int offset : new int[] {0, 32 * MiB}) {
                ByteBuffer read = ByteBuffer.allocateDirect(REQUEST);
                assertEquals(REQUEST, client.read(read, offset));
                assertArrayEquals(slice(expected, offset, REQUEST), bytes(read.flip()), "READ at " + offset);
            }
            byte[] written = new byte[REQUEST];
            new Random(11).nextBytes(written);
            client.write(ByteBuffer.wrap(written), 16 * MiB, true);
            System.arraycopy(written, 0, expected, 16 * MiB, REQUEST);
            // Several at once on both connections: each request still holds at most its connection's share.
            List<CompletableFuture<Integer>> reads = new ArrayList<>();
            List<ByteBuffer> buffers = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                ByteBuffer buffer = ByteBuffer.allocateDirect(REQUEST);
                buffers.add(buffer);
                reads.add(client.readAsync(buffer, i * 4L * MiB));
            }
            for (int i = 0; i < reads.size(); i++) {
                assertEquals(REQUEST, NbdClient.await(reads.get(i)));
                assertArrayEquals(slice(expected, i * 4 * MiB, REQUEST), bytes(buffers.get(i).flip()), "READ " + i);
            }
            assertArrayEquals(expected, Files.readAllBytes(file));
            ServerStats stats = server.stats();
            assertEquals(0, stats.errors(NbdCommand.READ) + stats.errors(NbdCommand.WRITE));
            assertTrue(stats.peakPayloadBytesHeld() <= 2 * SHARE,
                    "requests held " + stats.peakPayloadBytesHeld() + " bytes of payload buffers at once; two "
                            + "connections may hold " + 2 * SHARE);
            assertTrue(stats.peakPayloadBytesHeld() > 0);
        }
    }

    @Test
    void simpleAndDontFragmentRepliesAreSentPieceByPieceToLibnbd() throws Exception {
        String python = ExternalTools.python();
        Path file = dir.resolve("image.img");
        byte[] expected = image(file);
        Path script = dir.resolve("large.py");
        Files.writeString(script, String.join("\n",
                "import hashlib, os, nbd",
                "for structured, flags in ((False, 0), (True, nbd.CMD_FLAG_DF), (True, 0)):",
                "    h = nbd.NBD()",
                "    h.set_request_structured_replies(structured)",
                "    h.connect_uri(os.environ['uri'])",
                "    assert h.get_structured_replies_negotiated() == structured",
                "    chunks = []",
                "    def chunk(subbuf, offset, status, error):",
                "        chunks.append(offset)",
                "        return 0",
                "    if structured:",
                "        data = h.pread_structured(32 << 20, 4 << 20, chunk, flags=flags)",
                "    else:",
                "        data = h.pread(32 << 20, 4 << 20)",
                "    print('structured' if structured else 'simple', flags, len(chunks), hashlib.sha256(data).hexdigest())",
                "    h.shutdown()",
                ""));
        try (FileDevice export = FileDevice.open(file, CacheMode.WRITEBACK, java.nio.file.StandardOpenOption.READ);
             NbdServer server = NbdServer.builder().export("", export).unixSocket(dir.resolve("s.sock"))
                     .maxInflightBytes(BUDGET).start()) {
            ExternalTools.Result result = ExternalTools.run(Map.of("uri", server.uri()), 60, python, script.toString())
                    .assertOk("large.py");
            String digest = sha256(slice(expected, 4 * MiB, REQUEST));
            String[] lines = result.stdout().strip().split("\n");
            assertEquals(3, lines.length, result.stdout());
            for (String line : lines) assertTrue(line.endsWith(" " + digest), line + " (want " + digest + ")");
            assertTrue(lines[1].startsWith("structured 4 1 "), "DF: one data chunk however it is sent: " + lines[1]);
            long chunks = 1 + 28L * MiB / SHARE; // a hole chunk for [4, 8 MiB), then a data chunk per piece
            assertTrue(lines[2].startsWith("structured 0 " + chunks + " "), "one chunk per piece: " + lines[2]);
            assertTrue(server.stats().peakPayloadBytesHeld() <= SHARE, "held " + server.stats().peakPayloadBytesHeld());
        }
    }

    private static String sha256(byte[] data) throws Exception {
        StringBuilder hex = new StringBuilder();
        for (byte b : java.security.MessageDigest.getInstance("SHA-256").digest(data)) hex.append(String.format("%02x", b));
        return hex.toString();
    }

    /** A memory export whose reads and writes fail at or past failAt. */
    private static final class FailingExport implements BlockDevice {
        final MemoryDevice memory = new MemoryDevice(64 * MiB);
        final long failAt;

        FailingExport(long failAt) {
            this.failAt = failAt;
        }

        @Override public long size() { return memory.size(); }

        @Override
        public void readFully(ByteBuffer dst, long offset) throws IOException {
            if (offset + dst.remaining() > failAt) throw new IOException("medium error at " + failAt);
            memory.readFully(dst, offset);
        }

        @Override
        public void write(ByteBuffer src, long offset, boolean fua) throws IOException {
            if (offset + src.remaining() > failAt) throw new IOException("medium error at " + failAt);
            memory.write(src, offset, fua);
        }

        @Override
        public Capabilities capabilities() { return Capabilities.of(Capability.WRITE, Capability.MULTI_CONN); }
    }

    @Test
    void aFailureInTheMiddleOfALargeRequestIsAnErrorAndTheConnectionGoesOn() throws Exception {
        FailingExport export = new FailingExport(20 * MiB);
        io.pagewise.testing.RecordingLogger log = new io.pagewise.testing.RecordingLogger(null, System.Logger.Level.DEBUG);
        try (NbdServer server = NbdServer.builder().export("", export).unixSocket(dir.resolve("s.sock"))
                .maxInflightBytes(BUDGET).logger(log).start();
             NbdClient client = NbdClient.connect(server.uri())) {
            NbdException read = assertThrows(NbdException.class, () -> client.read(ByteBuffer.allocateDirect(REQUEST), 0));
            assertTrue(read.getMessage().contains("(read at 0 (+" + REQUEST + "): Input/output error (EIO))"),
                    read.getMessage());
            NbdException write = assertThrows(NbdException.class,
                    () -> client.write(ByteBuffer.allocateDirect(REQUEST), 0, false));
            assertTrue(write.getMessage().contains("(write at 0 (+" + REQUEST + "): Input/output error (EIO))"),
                    write.getMessage());
            assertEquals(2, log.messages(System.Logger.Level.DEBUG, "medium error").size(),
                    "the device's own message is in the server's log: " + log.entries());
            // The rest of the failed WRITE's payload was read, so the next request is understood.
            ByteBuffer small = ByteBuffer.allocateDirect(4096);
            client.read(small, 4096);
            assertEquals(2, server.stats().errors(NbdCommand.READ) + server.stats().errors(NbdCommand.WRITE));
            // Buffers go back just after the reply is sent.
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (server.stats().payloadBytesHeld() != 0 && System.nanoTime() < deadline) Thread.sleep(5);
            assertEquals(0, server.stats().payloadBytesHeld(), "buffers given back");
        }
    }

    @Test
    void aSimpleReplyThatFailsAfterItsHeaderEndsTheConnection() throws Exception {
        FailingExport export = new FailingExport(20 * MiB);
        try (NbdServer server = NbdServer.builder().export("", export).unixSocket(dir.resolve("s.sock"))
                .maxInflightBytes(BUDGET).start();
             SocketChannel channel = SocketChannel.open(UnixDomainSocketAddress.of(dir.resolve("s.sock")))) {
            read(channel, 18);
            channel.write(ByteBuffer.allocate(4).putInt(Protocol.CLIENT_FIXED_NEWSTYLE | Protocol.CLIENT_NO_ZEROES).flip());
            channel.write(ByteBuffer.allocate(16).putLong(Protocol.IHAVEOPT).putInt(Protocol.OPT_EXPORT_NAME).putInt(0).flip());
            read(channel, 10);
            channel.write(ByteBuffer.allocate(28).putInt(Protocol.REQUEST_MAGIC).putShort((short) 0)
                    .putShort((short) Protocol.CMD_READ).putLong(7).putLong(0).putInt(REQUEST).flip());
            ByteBuffer header = read(channel, 16);
            assertEquals(Protocol.SIMPLE_REPLY_MAGIC, header.getInt());
            assertEquals(0, header.getInt(), "the header goes out with the first piece, before the failure");
            long received = 0;
            ByteBuffer sink = ByteBuffer.allocateDirect(MiB);
            while (channel.read(sink.clear()) >= 0) received += sink.position();
            assertTrue(received < REQUEST, "the data must stop short: " + received);
            assertEquals(20L * MiB, received, "everything before the failing piece arrived");
        }
    }

    private static ByteBuffer read(SocketChannel channel, int n) throws IOException {
        ByteBuffer buffer = ByteBuffer.allocate(n);
        while (buffer.hasRemaining()) {
            if (channel.read(buffer) < 0) throw new EOFException();
        }
        return buffer.flip();
    }
}

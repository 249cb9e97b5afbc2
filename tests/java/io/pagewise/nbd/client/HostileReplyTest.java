package io.pagewise.nbd.client;

import static io.pagewise.nbd.wire.Protocol.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.Extent;
import io.pagewise.nbd.client.ExportInfo;
import io.pagewise.nbd.wire.SocketIo;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Reply chunks a hostile server crafts so that their range checks overflow, or that leave part of a READ unfilled;
 * BLOCK_STATUS replies with more descriptors than anyone needs; and a server that stops reading.
 */
@Timeout(30)
class HostileReplyTest {
    @TempDir
    Path dir;

    @Test
    void anOffsetDataChunkWhoseEndOverflowsFailsTheRead() throws Exception {
        // offset + length passes Long.MAX_VALUE: an unchecked sum wraps negative and let the chunk through,
        // after which the client read none of its 4 GiB and took the READ as done.
        long offset = (1L << 63) - (1L << 32) + 16;
        ByteBuffer chunk = ByteBuffer.allocate(CHUNK_HEADER_SIZE + 8).putInt(STRUCTURED_REPLY_MAGIC)
                .putShort((short) REPLY_FLAG_DONE).putShort((short) REPLY_TYPE_OFFSET_DATA).putLong(1)
                .putInt(0xffffffff).putLong(offset).flip();
        assertReadFails(chunk, "lies outside");
    }

    @Test
    void anOffsetHoleChunkWhoseEndOverflowsFailsTheRead() throws Exception {
        ByteBuffer chunk = ByteBuffer.allocate(CHUNK_HEADER_SIZE + 12).putInt(STRUCTURED_REPLY_MAGIC)
                .putShort((short) REPLY_FLAG_DONE).putShort((short) REPLY_TYPE_OFFSET_HOLE).putLong(1).putInt(12)
                .putLong(Long.MAX_VALUE - 8).putInt(4096).flip();
        assertReadFails(chunk, "lies outside");
    }

    /** An OFFSET_DATA chunk of the READ at 0 (+4096) for [at, at + size), flagged DONE if done. */
    private static ByteBuffer dataChunk(long at, int size, boolean done) {
        return ByteBuffer.allocate(CHUNK_HEADER_SIZE + 8 + size).putInt(STRUCTURED_REPLY_MAGIC)
                .putShort((short) (done ? REPLY_FLAG_DONE : 0)).putShort((short) REPLY_TYPE_OFFSET_DATA).putLong(1)
                .putInt(8 + size).putLong(at).position(CHUNK_HEADER_SIZE + 8 + size).flip();
    }

    private static ByteBuffer concat(ByteBuffer... parts) {
        ByteBuffer all = ByteBuffer.allocate(java.util.Arrays.stream(parts).mapToInt(ByteBuffer::remaining).sum());
        for (ByteBuffer part : parts) all.put(part);
        return all.flip();
    }

    @Test
    void aReadWhoseChunksLeaveAGapFails() throws Exception {
        // The buffer's last 2 KiB would have reached the caller as data, whatever they held.
        assertReadFails(dataChunk(0, 2048, true), "incomplete: nothing for +2048 (+2048)");
        assertReadFails(concat(dataChunk(0, 1024, false), dataChunk(2048, 2048, true)), "nothing for +1024 (+1024)");
        ByteBuffer noneOnly = ByteBuffer.allocate(CHUNK_HEADER_SIZE).putInt(STRUCTURED_REPLY_MAGIC)
                .putShort((short) REPLY_FLAG_DONE).putShort((short) REPLY_TYPE_NONE).putLong(1).putInt(0).flip();
        assertReadFails(noneOnly, "nothing for +0 (+4096)");
    }

    @Test
    void aReadWhoseChunksOverlapFails() throws Exception {
        // Overlap lets the lengths add up to the request while a gap stays elsewhere.
        assertReadFails(concat(dataChunk(0, 2048, false), dataChunk(1024, 2048, false), dataChunk(3072, 1024, true)),
                "chunks overlap at +1024");
    }

    /** A BLOCK_STATUS chunk for cookie 1 whose header says length bytes and which carries descriptors. */
    private static ByteBuffer statusChunk(long length, int descriptors, int descriptorLength) {
        ByteBuffer chunk = ByteBuffer.allocate(CHUNK_HEADER_SIZE + 4 + 8 * descriptors).putInt(STRUCTURED_REPLY_MAGIC)
                .putShort((short) REPLY_FLAG_DONE).putShort((short) REPLY_TYPE_BLOCK_STATUS).putLong(1)
                .putInt((int) length).putInt(1);
        for (int i = 0; i < descriptors; i++) chunk.putInt(descriptorLength).putInt(i % 2 == 0 ? 0 : STATE_HOLE | STATE_ZERO);
        return chunk.flip();
    }

    /** A NONE chunk that answers cookie 2: the connection is still in step after the chunk before it. */
    private static ByteBuffer doneWith2() {
        return ByteBuffer.allocate(CHUNK_HEADER_SIZE).putInt(STRUCTURED_REPLY_MAGIC).putShort((short) REPLY_FLAG_DONE)
                .putShort((short) REPLY_TYPE_NONE).putLong(2).putInt(0).flip();
    }

    @Test
    void aBlockStatusReplyWithMillionsOfDescriptorsKeepsAtMostTheCap() throws Exception {
        // 2 Mi descriptors of one byte each, all inside the range: before, each became an Extent (some 80 MiB).
        int descriptors = 2 << 20;
        List<Extent> kept = blockStatus(1L << 31, concat(statusChunk(4 + 8L * descriptors, descriptors, 1), doneWith2()));
        assertEquals(ClientConnection.MAX_KEPT_EXTENTS, kept.size());
        for (int i = 0; i < kept.size(); i++) {
            assertEquals(new Extent(i, 1, i % 2 == 1), kept.get(i), "descriptor " + i);
        }
    }

    @Test
    void descriptorsPastTheEndOfTheRangeAreDropped() throws Exception {
        // A range of 8 KiB, answered with 1000 descriptors of 4 KiB: the first two describe it, the rest nothing asked.
        List<Extent> kept = blockStatus(8192, concat(statusChunk(4 + 8 * 1000, 1000, 4096), doneWith2()));
        assertEquals(2, kept.size(), "descriptors kept of 1000");
        assertEquals(List.of(new Extent(0, 4096, false), new Extent(4096, 4096, true)), kept);
    }

    @Test
    void aBlockStatusChunkLongerThanAnyReplyNeedsEndsTheConnection() throws Exception {
        // Only the header: its length alone is refused, before the client waits for 4 GiB that never come.
        ByteBuffer header = statusChunk(0xfffffffcL, 0, 0);
        ExecutionException e = assertThrows(ExecutionException.class, () -> blockStatus(1 << 20, header));
        assertTrue(e.getCause().getMessage().contains("longer than the 67108868 bytes any reply needs"),
                String.valueOf(e.getCause()));
    }

    /**
     * Sends BLOCK_STATUS 0 (+length) as cookie 1 and a FLUSH as cookie 2 to a server that answers with serverSays,
     * waits for both and returns the extents the client kept for the first.
     */
    private List<Extent> blockStatus(long length, ByteBuffer serverSays) throws Exception {
        ExportInfo info = new ExportInfo(1L << 32, TF_HAS_FLAGS | TF_SEND_FLUSH, 1, 4096, MIN_MAX_PAYLOAD, true, 1);
        try (ServerSocketChannel listener = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            listener.bind(UnixDomainSocketAddress.of(dir.resolve("status.sock")));
            SocketChannel client = SocketChannel.open(listener.getLocalAddress());
            try (SocketChannel server = listener.accept()) {
                ClientConnection connection = new ClientConnection(client, null, info, "hostile", 0);
                try {
                    List<Extent> extents = new ArrayList<>();
                    var status = connection.submit(new ClientConnection.Request(CMD_BLOCK_STATUS, 0, length, null,
                            extents), 0, null);
                    var flush = connection.submit(new ClientConnection.Request(CMD_FLUSH, 0, 0, null, null), 0, null);
                    var sending = CompletableFuture.runAsync(() -> {
                        try {
                            SocketIo.writeFully(server, serverSays);
                        } catch (IOException ignored) {
                            // the client closed the connection on a reply it refused
                        }
                    });
                    status.get(20, TimeUnit.SECONDS);
                    flush.get(20, TimeUnit.SECONDS);
                    sending.get(20, TimeUnit.SECONDS);
                    return extents;
                } finally {
                    connection.close();
                }
            }
        }
    }

    @Test
    void closeReturnsWhileASendIsStuckOnAServerThatStoppedReading() throws Exception {
        ExportInfo info = new ExportInfo(1L << 30, TF_HAS_FLAGS | TF_SEND_DF, 1, 4096, MIN_MAX_PAYLOAD, true, -1);
        try (ServerSocketChannel listener = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            listener.bind(UnixDomainSocketAddress.of(dir.resolve("deaf.sock")));
            SocketChannel client = SocketChannel.open(listener.getLocalAddress());
            try (SocketChannel server = listener.accept()) {
                ClientConnection connection = new ClientConnection(client, null, info, "deaf", 0);
                // 32 MiB cannot fit in the socket's buffers, and the server reads nothing: the sender blocks.
                var write = java.util.concurrent.CompletableFuture.supplyAsync(() -> connection.submit(
                        new ClientConnection.Request(CMD_WRITE, 0, 32 << 20, null, null), 0, ByteBuffer.allocate(32 << 20)))
                        .thenCompose(f -> f);
                Thread.sleep(300);
                assertTrue(!write.isDone(), "the write should be stuck in its send");
                // Before, close() waited for the send lock for ever.
                org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(java.time.Duration.ofSeconds(15),
                        connection::close);
                ExecutionException e = assertThrows(ExecutionException.class, () -> write.get(10, TimeUnit.SECONDS));
                assertTrue(e.getCause() instanceof IOException, String.valueOf(e.getCause()));
            }
        }
    }

    private void assertReadFails(ByteBuffer serverSays, String expected) throws Exception {
        ExportInfo info = new ExportInfo(1 << 20, TF_HAS_FLAGS | TF_SEND_DF, 1, 4096, MIN_MAX_PAYLOAD, true, -1);
        try (ServerSocketChannel listener = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            Path socket = dir.resolve("s.sock");
            java.nio.file.Files.deleteIfExists(socket);
            listener.bind(UnixDomainSocketAddress.of(socket));
            SocketChannel client = SocketChannel.open(listener.getLocalAddress());
            try (SocketChannel server = listener.accept()) {
                ClientConnection connection = new ClientConnection(client, null, info, "hostile", 0);
                var read = connection.submit(new ClientConnection.Request(CMD_READ, 0, 4096, ByteBuffer.allocate(4096),
                        null), 0, null);
                SocketIo.writeFully(server, serverSays);
                ExecutionException e = assertThrows(ExecutionException.class, () -> read.get(10, TimeUnit.SECONDS));
                assertTrue(e.getCause() instanceof IOException && e.getCause().getMessage().contains(expected),
                        String.valueOf(e.getCause()));
                connection.close();
            }
        }
    }
}

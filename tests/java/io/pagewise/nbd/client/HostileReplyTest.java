package io.pagewise.nbd.client;

import static io.pagewise.nbd.wire.Protocol.*;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.nbd.ExportInfo;
import io.pagewise.nbd.wire.SocketIo;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Reply chunks a hostile server crafts so that their range checks overflow. */
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
        assertReadFails(chunk);
    }

    @Test
    void anOffsetHoleChunkWhoseEndOverflowsFailsTheRead() throws Exception {
        ByteBuffer chunk = ByteBuffer.allocate(CHUNK_HEADER_SIZE + 12).putInt(STRUCTURED_REPLY_MAGIC)
                .putShort((short) REPLY_FLAG_DONE).putShort((short) REPLY_TYPE_OFFSET_HOLE).putLong(1).putInt(12)
                .putLong(Long.MAX_VALUE - 8).putInt(4096).flip();
        assertReadFails(chunk);
    }

    private void assertReadFails(ByteBuffer serverSays) throws Exception {
        ExportInfo info = new ExportInfo(1 << 20, TF_HAS_FLAGS | TF_SEND_DF, 1, 4096, MIN_MAX_PAYLOAD, true, -1);
        try (ServerSocketChannel listener = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            listener.bind(UnixDomainSocketAddress.of(dir.resolve("s.sock")));
            SocketChannel client = SocketChannel.open(listener.getLocalAddress());
            try (SocketChannel server = listener.accept()) {
                ClientConnection connection = new ClientConnection(client, null, info, "hostile", 0);
                var read = connection.submit(new ClientConnection.Request(CMD_READ, 0, 4096, ByteBuffer.allocate(4096),
                        null), 0, null);
                SocketIo.writeFully(server, serverSays);
                ExecutionException e = assertThrows(ExecutionException.class, () -> read.get(10, TimeUnit.SECONDS));
                assertTrue(e.getCause() instanceof IOException && e.getCause().getMessage().contains("lies outside"),
                        String.valueOf(e.getCause()));
                connection.close();
            }
        }
    }
}

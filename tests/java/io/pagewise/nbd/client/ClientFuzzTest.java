package io.pagewise.nbd.client;

import io.pagewise.testing.FuzzSockets;
import io.pagewise.testing.ScriptedChannel;
import static io.pagewise.nbd.wire.Protocol.*;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.pagewise.Extent;
import io.pagewise.nbd.client.ExportInfo;
import io.pagewise.nbd.client.ClientConnection;
import io.pagewise.nbd.client.ClientHandshake;
import io.pagewise.nbd.wire.SocketIo;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Tag;

/**
 * The client fed a hostile server's bytes. Invariants: it fails only with an IOException (NbdException included)
 * that no RuntimeException or Error caused, it never allocates from a length field beyond its limits (64 KiB for
 * an option reply: a read asking for more fails the input), and it ends: the handshake at end of stream, and every
 * request's future once the server's stream ends. Seeds: tests/resources/io/pagewise/nbd/client/ClientFuzzTestInputs/.
 */
@Tag("fuzz")
class ClientFuzzTest {
    private static final long EXPORT_SIZE = 1 << 20;
    private static final ExecutorService SERVER = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "fuzz-server");
        t.setDaemon(true);
        return t;
    });
    private static final ServerSocketChannel LISTENER = FuzzSockets.listen("client.sock");

    /** ClientHandshake against a server that says anything: the input is the server's side of the handshake. */
    @FuzzTest
    void handshake(byte[] serverBytes) {
        ScriptedChannel channel = new ScriptedChannel(serverBytes, MAX_OPTION_LENGTH);
        ExportInfo info;
        try {
            info = new ClientHandshake(channel, "fuzz", "disk").negotiate();
        } catch (IOException e) {
            assertNoUncheckedCause(e);
            return;
        }
        assertTrue(info.size() >= 0, "accepted an export size of " + info.size());
        assertTrue(info.minimumBlock() >= 1 && info.minimumBlock() <= info.preferredBlock()
                && info.minimumBlock() <= info.maximumPayload(), "accepted block sizes " + info);
    }

    /**
     * ClientConnection's reply reader against a server that says anything. Five requests are in flight (READ 4 KiB
     * with cookie 1, READ 64 KiB at 4 KiB with cookie 2, BLOCK_STATUS 1 MiB with cookie 3, WRITE 512 bytes with
     * cookie 4, FLUSH with cookie 5); the input's first byte picks what the handshake settled (bit 0: structured
     * replies, bit 1: base:allocation as context 1, bit 2: extended headers, which imply structured replies), the
     * rest is what the server sends before it hangs up.
     */
    @FuzzTest
    void replies(byte[] input) throws Exception {
        if (input.length == 0) return;
        boolean extended = (input[0] & 4) != 0;
        boolean structured = (input[0] & 1) != 0 || extended;
        long allocation = structured && (input[0] & 2) != 0 ? 1 : -1;
        ExportInfo info = new ExportInfo(EXPORT_SIZE, TF_HAS_FLAGS | TF_SEND_FLUSH | (structured ? TF_SEND_DF : 0), 1,
                4096, MIN_MAX_PAYLOAD, structured, allocation, extended);
        ByteBuffer serverBytes = ByteBuffer.wrap(input, 1, input.length - 1);

        SocketChannel clientSide = SocketChannel.open(StandardProtocolFamily.UNIX);
        clientSide.connect(LISTENER.getLocalAddress());
        try (SocketChannel serverSide = LISTENER.accept()) {
            ClientConnection connection = new ClientConnection(clientSide, null, info, "fuzz", 0);
            List<CompletableFuture<Void>> replies = new ArrayList<>();
            List<Extent> extents = new ArrayList<>();
            replies.add(connection.submit(new ClientConnection.Request(CMD_READ, 0, 4096, ByteBuffer.allocate(4096), null), 0, null));
            replies.add(connection.submit(new ClientConnection.Request(CMD_READ, 4096, 65536, ByteBuffer.allocate(65536), null), 0, null));
            replies.add(connection.submit(new ClientConnection.Request(CMD_BLOCK_STATUS, 0, EXPORT_SIZE, null, extents), 0, null));
            replies.add(connection.submit(new ClientConnection.Request(CMD_WRITE, 0, 512, null, null), 0, ByteBuffer.allocate(512)));
            replies.add(connection.submit(new ClientConnection.Request(CMD_FLUSH, 0, 0, null, null), 0, null));
            Future<?> requestsRead = SERVER.submit(() -> FuzzSockets.drain(serverSide));
            try {
                SocketIo.writeFully(serverSide, serverBytes);
                serverSide.shutdownOutput();
            } catch (IOException e) {
                // the client hung up after a reply it refused: the rest of the stream is not wanted
            }
            for (CompletableFuture<Void> reply : replies) {
                try {
                    reply.get(10, TimeUnit.SECONDS);
                } catch (TimeoutException e) {
                    throw new AssertionError("a request is still waiting 10 s after the server's end of stream", e);
                } catch (ExecutionException e) {
                    assertTrue(e.getCause() instanceof IOException, "a request failed with " + e.getCause());
                    assertNoUncheckedCause((IOException) e.getCause());
                }
            }
            connection.close();
            requestsRead.get(10, TimeUnit.SECONDS);
        } finally {
            clientSide.close();
        }
    }

    /** A hostile server's bytes may make the client fail, but through its own checks, not through a crash. */
    private static void assertNoUncheckedCause(IOException e) {
        for (Throwable cause = e; cause != null; cause = cause.getCause()) {
            if (cause instanceof RuntimeException || cause instanceof Error) {
                throw new AssertionError("the client failed through " + cause, e);
            }
        }
    }
}

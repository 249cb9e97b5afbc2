package io.pagewise.nbd.client;

import io.pagewise.Extent;
import java.io.IOException;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * One connection negotiated by hand, whose requests may carry any command flags: for tests of what the server does
 * with requests that {@link NbdClient} never sends (WRITE_ZEROES with FUA, BLOCK_STATUS with REQ_ONE).
 */
public final class RawConnection implements AutoCloseable {
    private final ClientConnection connection;
    private final ExportInfo info;

    private RawConnection(ClientConnection connection, ExportInfo info) {
        this.connection = connection;
        this.info = info;
    }

    /** Negotiates the export on a connected channel (no TLS); server names the server in messages. */
    public static RawConnection negotiate(SocketChannel channel, String server, String exportName) throws IOException {
        ExportInfo info = new ClientHandshake(channel, server, exportName).negotiate();
        return new RawConnection(new ClientConnection(channel, null, info, server, 0), info);
    }

    public ExportInfo info() {
        return info;
    }

    /** Sends a request without payload (WRITE_ZEROES, TRIM, FLUSH, CACHE) and waits for its reply. */
    public void send(int command, long offset, long length, int flags) throws Exception {
        connection.submit(new ClientConnection.Request(command, offset, length, null, null), flags, null)
                .get(30, TimeUnit.SECONDS);
    }

    /** Sends BLOCK_STATUS with flags and returns the extents of the reply. */
    public List<Extent> blockStatus(int command, long offset, long length, int flags) throws Exception {
        List<Extent> extents = new ArrayList<>();
        blockStatusAsync(command, offset, length, flags, extents).get(30, TimeUnit.SECONDS);
        return extents;
    }

    /** Sends BLOCK_STATUS with flags; the reply's extents are added to into before the future completes. */
    public CompletableFuture<Void> blockStatusAsync(int command, long offset, long length, int flags, List<Extent> into) {
        return connection.submit(new ClientConnection.Request(command, offset, length, null, into), flags, null);
    }

    @Override
    public void close() throws IOException {
        connection.close();
    }
}

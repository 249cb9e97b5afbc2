package io.pagewise.copy;

import io.pagewise.Extent;
import io.pagewise.nbd.ExportInfo;
import io.pagewise.nbd.NbdClient;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/** An NBD export on either side of a copy. */
public final class NbdEndpoint implements CopySource, CopyDestination {
    private static final ByteBuffer ZEROES = ByteBuffer.allocateDirect(1 << 20).asReadOnlyBuffer();

    private final NbdClient client;

    /**
     * An endpoint over a connected client; closing the endpoint closes the client.
     *
     * @param client the connected client
     */
    public NbdEndpoint(NbdClient client) {
        this.client = client;
    }

    /**
     * Connects to an export.
     *
     * @param uri         the export's URI, as {@link NbdClient#connect(String, int)} takes it
     * @param connections how many connections to use at most (more than one only with multi-conn)
     * @return the endpoint
     * @throws IOException when the server cannot be reached or the handshake fails
     */
    public static NbdEndpoint connect(String uri, int connections) throws IOException {
        NbdClient client = NbdClient.connect(uri, connections);
        if (Copier.LOG.isLoggable(System.Logger.Level.DEBUG)) {
            ExportInfo info = client.info();
            Copier.LOG.log(System.Logger.Level.DEBUG, client.uri().text() + ": " + info.size() + " bytes, "
                    + client.connectionCount() + " of " + connections + " connections"
                    + (info.canMultiConn() ? "" : " (the server does not allow multi-conn)")
                    + ", requests of " + info.minimumBlock() + " to " + info.maximumPayload() + " bytes"
                    + (info.canWriteZeroes() ? "" : ", no WRITE_ZEROES: zeros are written as data")
                    + (info.hasBlockStatus() ? "" : ", no base:allocation: everything is read as data"));
        }
        return new NbdEndpoint(client);
    }

    /** {@return the client this endpoint uses} */
    public NbdClient client() { return client; }

    @Override
    public String name() { return client.uri().text(); }

    @Override
    public long size() { return client.size(); }

    @Override
    public List<Extent> extents(long offset, long length) throws IOException {
        long asked = Math.min(length, 1L << 30);
        List<Extent> clipped = new ArrayList<>();
        for (Extent e : client.blockStatus(offset, asked)) {
            long start = Math.max(e.offset(), offset);
            long end = Math.min(e.end(), offset + asked);
            if (end > start) clipped.add(new Extent(start, end - start, e.hole()));
        }
        return clipped.isEmpty() ? List.of(new Extent(offset, asked, false)) : clipped;
    }

    @Override
    public void readFully(ByteBuffer dst, long offset) throws IOException {
        int wanted = dst.remaining();
        int n = Math.max(0, client.read(dst, offset));
        if (n < wanted) {
            throw new EOFException(name() + " ends at " + (offset + n) + ", inside the read at " + offset + " (+"
                    + wanted + ")");
        }
    }

    @Override
    public void write(ByteBuffer src, long offset) throws IOException {
        client.write(src, offset, false);
    }

    @Override
    public void zero(long offset, long length, boolean allocate) throws IOException {
        if (client.info().canWriteZeroes()) {
            // NBD request lengths are 32-bit.
            for (long at = offset, end = offset + length; at < end; ) {
                long n = Math.min(end - at, 1L << 30);
                client.writeZeroes(at, n, allocate);
                at += n;
            }
            return;
        }
        for (long at = offset, end = offset + length; at < end; ) {
            int n = (int) Math.min(ZEROES.capacity(), Math.min(end - at, client.info().maximumPayload()));
            client.write(ZEROES.duplicate().limit(n), at, false);
            at += n;
        }
    }

    @Override
    public void flush() throws IOException {
        client.flush();
    }

    @Override
    public int blockSize() { return client.info().minimumBlock(); }

    @Override
    public int maximumRequest() { return client.info().maximumPayload(); }

    @Override
    public void close() throws IOException {
        client.close();
    }
}

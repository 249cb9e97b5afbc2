package io.pagewise.nbd.client;

import static io.pagewise.nbd.wire.Protocol.STATE_ZERO;

import io.pagewise.Extent;
import io.pagewise.nbd.wire.SocketIo;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ByteChannel;

/**
 * Reads the payload of a BLOCK_STATUS chunk into a request's extents: compact descriptors (32-bit lengths) or, with
 * extended headers, BLOCK_STATUS_EXT ones (64-bit lengths, padding, status). At most
 * {@link ClientConnection#MAX_KEPT_EXTENTS} descriptors are kept, and none past the end of the request's range: the
 * caller asks again from where the list ends, as it must for any server that answers a prefix. The rest of the chunk
 * is read in batches and dropped, so a hostile reply costs the client time on the wire, not memory; a chunk longer
 * than any honest reply ends the connection, as libnbd does.
 */
final class StatusChunks {
    /** The most descriptor bytes in a chunk taken, libnbd's limit on any reply chunk: 64 MiB of descriptors. */
    static final long MAX_DESCRIPTOR_BYTES = 64L << 20;

    private StatusChunks() {}

    /**
     * Reads a chunk of length bytes whose descriptors are 16 bytes (wide) or 8, into request's extents (or its
     * statuses, for a named meta context); a chunk for another context than wanted (-1: any) is read and dropped.
     */
    static void read(ByteChannel channel, ClientConnection.Request request, long length, boolean wide,
                     ByteBuffer scratch, long wanted) throws IOException {
        int prefix = wide ? 8 : 4;
        int size = wide ? 16 : 8;
        String type = wide ? "BLOCK_STATUS_EXT" : "BLOCK_STATUS";
        if (length < prefix + size || (length - prefix) % size != 0) {
            throw new IOException(type + " chunk of " + length + " bytes");
        }
        if (length > MAX_DESCRIPTOR_BYTES + prefix) {
            throw new IOException(type + " chunk of " + length + " bytes (" + (length - prefix) / size + " descriptors) to "
                    + request.describe() + " is longer than the " + (MAX_DESCRIPTOR_BYTES + prefix)
                    + " bytes any reply needs");
        }
        // The context id, and a wide chunk's descriptor count, which may be 0 and is not needed: the length says it.
        scratch.clear().limit(prefix);
        SocketIo.readExactly(channel, scratch);
        boolean keep = wanted == -1 || Integer.toUnsignedLong(scratch.getInt(0)) == wanted;
        long position = request.offset;
        long end = request.offset + request.length;
        int batch = scratch.capacity() / size;
        for (long left = (length - prefix) / size; left > 0; ) {
            int n = (int) Math.min(left, batch);
            scratch.clear().limit(n * size);
            SocketIo.readExactly(channel, scratch);
            for (int i = 0; i < n; i++) {
                long extent = wide ? scratch.getLong(size * i) : Integer.toUnsignedLong(scratch.getInt(size * i));
                int state = scratch.getInt(size * i + size - 4);
                if (extent < 0) throw new IOException(type + " descriptor of " + Long.toUnsignedString(extent) + " bytes");
                if (keep && request.extents != null && extent > 0 && position < end
                        && request.extents.size() < ClientConnection.MAX_KEPT_EXTENTS) {
                    request.extents.add(new Extent(position, extent, (state & STATE_ZERO) != 0));
                }
                if (keep && request.statuses != null && extent > 0 && position < end
                        && request.statuses.size() < ClientConnection.MAX_KEPT_EXTENTS) {
                    request.statuses.add(new BlockStatus(position, extent, state));
                }
                position += extent;
            }
            left -= n;
        }
    }
}

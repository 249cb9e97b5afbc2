package io.pagewise.nbd.server.protocol;

import static io.pagewise.nbd.wire.Protocol.CMD_FLAG_FUA;
import static io.pagewise.nbd.wire.Protocol.MAX_PAYLOAD;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;

/**
 * One request of a connection: its header, its payload buffers and its reply. Each of a connection's threads has
 * one and reuses it for every request it serves.
 */
final class Request {
    static final int MAX_PAYLOAD_PIECES = MAX_PAYLOAD / PayloadBuffers.LARGE + 1;
    /**
     * Room for the largest reply header run: a BLOCK_STATUS_EXT chunk of 256 descriptors of 16 bytes, or one such
     * chunk per meta context with fewer descriptors each ({@link ReplyEncoder#descriptorLimit}).
     */
    static final int HEADER_AREA = 8192;

    int type;
    int flags;
    long cookie;
    long offset;
    long length;
    long started;
    /** The NBD error to answer with, once refused or failed. */
    int error;
    /** Why the request is answered with an error without running, or null. */
    String refusal;
    /** Bytes taken from the server's budget and from the connection's. */
    long charge;
    long connectionCharge;
    /** The payload buffers, pieces[0..pieceCount): together they hold the request, or one share-sized part of it. */
    final ByteBuffer[] pieces = new ByteBuffer[MAX_PAYLOAD_PIECES];
    int pieceCount;
    /** Reply headers are carved from here; the reply is segments[0..segmentCount), sent with one gathering write. */
    final ByteBuffer area = ByteBuffer.allocateDirect(HEADER_AREA);
    final ByteBuffer[] segments = new ByteBuffer[2 * ReadPlan.MAX_RUNS + MAX_PAYLOAD_PIECES * 2 + 4];
    int segmentCount;
    /** A READ's data and hole runs: planned by the executor, encoded by the encoder. */
    final ReadPlan plan = new ReadPlan();
    /**
     * A BLOCK_STATUS's runs, one list per selected meta context in the session's order: found by the executor,
     * encoded by the encoder, then dropped.
     */
    List<List<MetaContext.Run>> extents;
    /** A WRITE longer than a share was already written while its payload was received. */
    boolean writtenWhileReceiving;
    /** Why such a WRITE failed, or null. */
    Exception writeFailure;
    /** The reply (or part of it) went out while the request ran (a READ longer than a share); set by the sender. */
    boolean replied;

    void set(int type, int flags, long cookie, long offset, long length) {
        this.type = type;
        this.flags = flags;
        this.cookie = cookie;
        this.offset = offset;
        this.length = length;
        this.started = System.nanoTime();
        this.error = 0;
        this.refusal = null;
        this.writtenWhileReceiving = false;
        this.writeFailure = null;
        this.replied = false;
        this.extents = null;
    }

    boolean fua() {
        return (flags & CMD_FLAG_FUA) != 0;
    }

    /** Records why the request is refused; returns why. */
    String refuse(int error, String why) {
        this.error = error;
        return why;
    }

    /** {@return the payload buffers as one vector}, each from its position to its limit */
    ByteBuffer[] payload() {
        return Arrays.copyOf(pieces, pieceCount);
    }

    /** Readies the first buffers to take the next min(bytes, share) bytes of payload; returns them as one vector. */
    ByteBuffer[] ready(long bytes, int share) {
        int used = 0;
        for (long left = Math.min(bytes, share); left > 0; used++) {
            ByteBuffer piece = pieces[used].clear();
            piece.limit((int) Math.min(piece.capacity(), left));
            left -= piece.limit();
        }
        return Arrays.copyOf(pieces, used);
    }

    /** The payload bytes [start, start + length) of the request, as slices of its buffers. */
    ByteBuffer[] slices(long start, long length) {
        int pieceSize = pieces[0].capacity();
        int first = (int) (start / pieceSize);
        int last = (int) ((start + length - 1) / pieceSize);
        ByteBuffer[] slices = new ByteBuffer[last - first + 1];
        for (long pos = start; pos < start + length; ) {
            int i = (int) (pos / pieceSize);
            int within = (int) (pos % pieceSize);
            int n = (int) Math.min(pieceSize - within, start + length - pos);
            slices[i - first] = pieces[i].slice(within, n);
            pos += n;
        }
        return slices;
    }

    void addSegment(ByteBuffer segment) {
        segments[segmentCount++] = segment;
    }

    void clearSegments() {
        for (int i = 0; i < segmentCount; i++) segments[i] = null;
        segmentCount = 0;
    }
}

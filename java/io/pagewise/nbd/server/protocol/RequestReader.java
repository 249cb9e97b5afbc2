package io.pagewise.nbd.server.protocol;

import static io.pagewise.device.DeviceException.EINVAL;
import static io.pagewise.device.DeviceException.ENOSPC;
import static io.pagewise.device.DeviceException.EPERM;
import static io.pagewise.nbd.wire.Protocol.*;

import io.pagewise.nbd.wire.SocketIo;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ByteChannel;

/**
 * Reads requests off a connection's socket and checks each against what the session negotiated. One thread at a
 * time (the connection's receiving lock): what follows a request on the socket is its WRITE payload.
 *
 * <p>A READ or WRITE holds payload buffers for at most the connection's share of the in-flight budget
 * ({@link ServerContext#payloadPiece()}); a longer one is served one share-sized part at a time, and its WRITE
 * payload is left on the socket for {@link #receivePart}.
 */
final class RequestReader {
    private final ByteChannel channel;
    private final Session session;
    private final ServerContext context;
    /** Payload bytes this connection may hold: its share of the server-wide budget. */
    private final ByteBudget connectionBudget;
    /** The longest READ or WRITE taken: the server's maximum payload, or the device's maximum when lower. */
    private final long maximumBlock;
    /** Extended headers: 32-byte requests with 64-bit lengths and PAYLOAD_LEN, else the compact 28-byte ones. */
    private final boolean extended;
    private final ByteBuffer head;
    private final ByteBuffer scratch = ByteBuffer.allocateDirect(64 * 1024);

    RequestReader(ByteChannel channel, Session session, ServerContext context, ByteBudget connectionBudget) {
        this.channel = channel;
        this.session = session;
        this.context = context;
        this.connectionBudget = connectionBudget;
        this.maximumBlock = Math.min(context.maxPayload(), (long) session.entry().device().maximumBlockSize());
        this.extended = session.extendedHeaders();
        this.head = ByteBuffer.allocateDirect(extended ? EXTENDED_HEADER_SIZE : REQUEST_HEADER_SIZE);
    }

    /**
     * Reads the next request into r: its header, the check (a refused request gets r.refusal, and its WRITE
     * payload is skipped), its payload buffers and budget, and a WRITE payload that fits in one share.
     *
     * @return false at the client's orderly end (end of stream between requests, or DISC)
     * @throws ProtocolViolation when the client broke the protocol, after which nothing more can be read
     */
    boolean read(Request r) throws IOException, InterruptedException {
        head.clear();
        if (!SocketIo.readFully(channel, head)) return false;
        head.flip();
        int magic = head.getInt();
        if (magic != (extended ? EXTENDED_REQUEST_MAGIC : REQUEST_MAGIC)) {
            throw new ProtocolViolation("bad request magic 0x" + Integer.toHexString(magic)
                    + (extended ? " (extended headers are in use)" : ""));
        }
        int flags = head.getShort() & 0xffff;
        int type = head.getShort() & 0xffff;
        long cookie = head.getLong();
        long offset = head.getLong();
        long length = extended ? head.getLong() : Integer.toUnsignedLong(head.getInt());
        if (type == CMD_DISC) return false;
        // qemu 10 sends extended WRITEs without PAYLOAD_LEN, libnbd with it: a WRITE's length is its payload's either way.
        boolean payload = type == CMD_WRITE || (extended && (flags & CMD_FLAG_PAYLOAD_LEN) != 0);
        if (payload && extended && Long.compareUnsigned(length, maximumBlock) > 0) {
            // The spec's answer: a payload over the maximum is not worth reading to stay in step.
            throw new ProtocolViolation(commandName(type) + " announces a payload of " + Long.toUnsignedString(length)
                    + " bytes, over the maximum block size " + maximumBlock);
        }
        r.set(type, flags, cookie, offset, length);
        r.refusal = check(r);
        if (r.refusal != null) {
            // The payload of a refused request is still on the wire: drop it to stay in step.
            if (payload) SocketIo.skip(channel, length, scratch);
            return true;
        }
        if (type == CMD_READ || type == CMD_WRITE) takeBuffers(r, Math.min(length, context.payloadPiece()));
        if (type == CMD_BLOCK_STATUS) charge(r, ReplyEncoder.BLOCK_STATUS_FOOTPRINT * Math.max(1, session.contexts().size()));
        if (type == CMD_WRITE && !isLong(r)) receivePart(r, length);
        return true;
    }

    /** True for a READ or WRITE longer than a connection's share, which is served one share at a time. */
    boolean isLong(Request r) {
        return r.length > context.payloadPiece();
    }

    /** Reads the next part of a long WRITE's payload, at most one share of left bytes; returns its buffers. */
    ByteBuffer[] receivePart(Request r, long left) throws IOException {
        ByteBuffer[] part = r.ready(left, context.payloadPiece());
        for (ByteBuffer piece : part) SocketIo.readExactly(channel, piece);
        for (ByteBuffer piece : part) piece.flip();
        return part;
    }

    /** Charges the budgets for held payload bytes and takes buffers for them. */
    private void takeBuffers(Request r, long held) throws InterruptedException, IOException {
        charge(r, PayloadBuffers.footprint(held));
        r.pieceCount = context.buffers().take(held, r.pieces);
    }

    /** Charges the budgets for bytes the request will hold while it runs. */
    private void charge(Request r, long footprint) throws InterruptedException {
        // The connection's share first: a connection at its cap waits without holding global bytes.
        r.connectionCharge = connectionBudget.acquire(footprint);
        r.charge = context.budget().acquire(footprint);
    }

    /** Gives back r's payload buffers and budget shares; safe to call twice. */
    void release(Request r) {
        if (r.pieceCount > 0) context.buffers().give(r.pieces, r.pieceCount);
        r.pieceCount = 0;
        if (r.charge > 0) context.budget().release(r.charge);
        r.charge = 0;
        if (r.connectionCharge > 0) connectionBudget.release(r.connectionCharge);
        r.connectionCharge = 0;
    }

    /** Null when the request may run, else why not (and r.error says which error to answer). */
    private String check(Request r) {
        int tf = session.transmissionFlags();
        boolean writable = (tf & TF_READ_ONLY) == 0;
        int allowed = (tf & TF_SEND_FUA) != 0 ? CMD_FLAG_FUA : 0;
        switch (r.type) {
            case CMD_READ:
                if ((tf & TF_SEND_DF) != 0) allowed |= CMD_FLAG_DF;
                break;
            case CMD_WRITE:
                if (extended) allowed |= CMD_FLAG_PAYLOAD_LEN;
                break;
            case CMD_TRIM:
            case CMD_FLUSH:
            case CMD_CACHE:
                break;
            case CMD_WRITE_ZEROES:
                allowed |= CMD_FLAG_NO_HOLE;
                if ((tf & TF_SEND_FAST_ZERO) != 0) allowed |= CMD_FLAG_FAST_ZERO;
                break;
            case CMD_BLOCK_STATUS:
                allowed |= CMD_FLAG_REQ_ONE;
                break;
            default:
                return r.refuse(EINVAL, "unknown command " + r.type);
        }
        if ((r.flags & ~allowed) != 0) {
            return r.refuse(EINVAL, "flags 0x" + Integer.toHexString(r.flags) + " not valid for " + commandName(r.type));
        }
        boolean changes = r.type == CMD_WRITE || r.type == CMD_TRIM || r.type == CMD_WRITE_ZEROES;
        if (changes && !writable) return r.refuse(EPERM, "export is read-only");
        if (r.type == CMD_TRIM && (tf & TF_SEND_TRIM) == 0) return r.refuse(EINVAL, "TRIM not supported");
        if (r.type == CMD_WRITE_ZEROES && (tf & TF_SEND_WRITE_ZEROES) == 0) return r.refuse(EINVAL, "WRITE_ZEROES not supported");
        if (r.type == CMD_FLUSH && (tf & TF_SEND_FLUSH) == 0) return r.refuse(EINVAL, "FLUSH not supported");
        if (r.type == CMD_CACHE && (tf & TF_SEND_CACHE) == 0) return r.refuse(EINVAL, "CACHE not supported");
        if (r.type == CMD_BLOCK_STATUS && session.contexts().isEmpty()) {
            return r.refuse(EINVAL, "BLOCK_STATUS without a selected meta context");
        }
        // Every block-status descriptor MUST have a nonzero length, so there is no valid answer to length 0.
        if (r.type == CMD_BLOCK_STATUS && r.length == 0) return r.refuse(EINVAL, "BLOCK_STATUS of length 0");
        if ((r.type == CMD_READ || r.type == CMD_WRITE) && Long.compareUnsigned(r.length, maximumBlock) > 0) {
            return r.refuse(EINVAL, "length " + Long.toUnsignedString(r.length) + " is over the maximum block size "
                    + maximumBlock);
        }
        // A 64-bit length of 2^63 or more is negative here: a range that no export holds.
        if (r.type != CMD_FLUSH && (r.offset < 0 || r.length < 0 || r.offset + r.length < 0
                || r.offset + r.length > session.size())) {
            // The spec asks for ENOSPC when a write goes past the end, EINVAL for everything else.
            int error = r.type == CMD_WRITE || r.type == CMD_WRITE_ZEROES ? ENOSPC : EINVAL;
            return r.refuse(error, "range " + Long.toUnsignedString(r.offset) + "+" + Long.toUnsignedString(r.length)
                    + " is past the end of the export (" + session.size() + " bytes)");
        }
        return null;
    }
}

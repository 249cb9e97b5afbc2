package io.pagewise.nbd.server.protocol;

import static io.pagewise.device.DeviceException.EINVAL;
import static io.pagewise.nbd.wire.Protocol.*;

import io.pagewise.device.BlockDevice;
import io.pagewise.device.Capability;
import io.pagewise.device.DeviceException;
import io.pagewise.device.ZeroFlag;
import io.pagewise.internal.Buffers;
import io.pagewise.internal.Errno;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * Executes checked requests on the device and leaves in each request what its reply needs: a READ's data and
 * {@link ReadPlan}, a BLOCK_STATUS's extents; the {@link ReplyEncoder} makes the reply from that, and the
 * {@link Transmission} sends it. The executor neither encodes nor sends.
 *
 * <p>A request travels whole: a READ is one {@link BlockDevice#readFully(ByteBuffer[], long)} per data run (one,
 * unless structured replies send holes as holes), a WRITE one {@link BlockDevice#write(ByteBuffer[], long, boolean)}
 * whose FUA makes that write durable by itself. Only a READ or WRITE longer than the connection's share of the
 * in-flight budget is split: one call per share-sized part, each part of a FUA WRITE durable by itself, and each
 * part of a READ handed to {@link ReadParts} to be encoded and sent before the next is read.
 */
final class RequestExecutor {
    /**
     * Where the parts of a READ longer than a share go as they are read: the connection's encoder and socket, under
     * its sending lock. Each method returns false once the connection can no longer send.
     */
    interface ReadParts {
        /** Takes the sending lock; false when the connection can no longer send (the lock is still taken). */
        boolean begin(Request r);

        /** Encodes and sends the hole [start, start + length) of r (relative to its offset) as the next part. */
        boolean hole(Request r, long start, long length, boolean last);

        /** Encodes and sends part, r's data from start (relative to its offset), flipped, as the next part. */
        boolean data(Request r, long start, ByteBuffer[] part, long length, boolean last);

        /** A read failed after part of the reply went out: ends the reply with an error chunk, or the connection. */
        void failedAfterReplying(Request r, Exception e);

        /** Releases the sending lock. */
        void end(Request r);
    }

    private final BlockDevice device;
    private final Session session;
    private final int share;

    RequestExecutor(BlockDevice device, Session session, int share) {
        this.device = device;
        this.session = session;
        this.share = share;
    }

    /** Executes the request, leaving what its reply needs in r; a READ longer than a share goes out through parts. */
    void execute(Request r, ReadParts parts) throws IOException {
        switch (r.type) {
            case CMD_READ:
                if (r.length > share) {
                    readInParts(r, parts);
                } else {
                    read(r);
                }
                return;
            case CMD_WRITE:
                write(r);
                return;
            case CMD_FLUSH:
                device.flush();
                return;
            case CMD_TRIM:
                device.trim(r.offset, r.length, r.fua());
                return;
            case CMD_WRITE_ZEROES:
                device.zero(r.offset, r.length, ZeroFlag.of((r.flags & CMD_FLAG_NO_HOLE) == 0,
                        (r.flags & CMD_FLAG_FAST_ZERO) != 0, r.fua()));
                return;
            case CMD_CACHE:
                device.cache(r.offset, r.length);
                return;
            case CMD_BLOCK_STATUS: {
                List<MetaContext> contexts = session.contexts();
                int limit = ReplyEncoder.descriptorLimit(r, contexts.size());
                List<List<MetaContext.Run>> runs = new ArrayList<>(contexts.size());
                for (MetaContext c : contexts) runs.add(c.runs(device, r.offset, r.length, limit));
                r.extents = runs;
                return;
            }
            default:
                throw new DeviceException(EINVAL, "unknown command " + r.type);
        }
    }

    private void write(Request r) throws IOException {
        if (!r.writtenWhileReceiving) {
            ByteBuffer[] payload = r.payload();
            device.write(payload, r.offset, r.fua());
            checkTransferred(payload, "write", r.offset, r.length);
            return;
        }
        Exception failure = r.writeFailure;
        if (failure instanceof IOException) throw (IOException) failure;
        if (failure != null) throw (RuntimeException) failure;
    }

    /**
     * A WRITE longer than a share, received and written one share at a time by the thread that holds the receiving
     * lock (what follows on the socket is this payload anyway). After a failed write the rest of the payload is
     * still read, to stay in step; the failure is answered once the request runs.
     */
    void receiveAndWrite(Request r, RequestReader reader) throws IOException {
        for (long done = 0; done < r.length; ) {
            ByteBuffer[] part = reader.receivePart(r, r.length - done);
            long n = Buffers.remaining(part);
            if (r.writeFailure == null) {
                try {
                    device.write(part, r.offset + done, r.fua());
                    checkTransferred(part, "write", r.offset + done, n);
                } catch (IOException | RuntimeException e) {
                    r.writeFailure = e;
                }
            }
            done += n;
        }
        r.writtenWhileReceiving = true;
    }

    /** Reads every data run first, so that an error becomes a clean error reply instead of a torn one. */
    private void read(Request r) throws IOException {
        ReadPlan plan = r.plan;
        plan.plan(device, r.offset, r.length, holesAllowed(r));
        for (int k = 0; k < plan.runs(); k++) {
            if (plan.hole(k)) continue;
            ByteBuffer[] run = r.slices(plan.start(k), plan.length(k));
            plan.data(k, run);
            device.readFully(run, r.offset + plan.start(k));
            checkTransferred(run, "readFully", r.offset + plan.start(k), plan.length(k));
        }
    }

    /**
     * A READ longer than a share: each part is read and handed to parts before the next one is read, under the
     * sending lock, so the request holds one share of buffers. A failure before anything went out is an ordinary
     * error reply; after, parts ends the reply ({@link ReadParts#failedAfterReplying}).
     */
    private void readInParts(Request r, ReadParts parts) throws IOException {
        ReadPlan plan = r.plan;
        plan.plan(device, r.offset, r.length, holesAllowed(r));
        try {
            if (!parts.begin(r)) return;
            for (int k = 0; k < plan.runs(); k++) {
                boolean lastRun = k == plan.runs() - 1;
                long end = plan.start(k) + plan.length(k);
                if (plan.hole(k)) {
                    if (!parts.hole(r, plan.start(k), plan.length(k), lastRun)) return;
                    continue;
                }
                for (long pos = plan.start(k); pos < end; ) {
                    ByteBuffer[] part = r.ready(end - pos, share);
                    long n = Buffers.remaining(part);
                    try {
                        device.readFully(part, r.offset + pos);
                        checkTransferred(part, "readFully", r.offset + pos, n);
                    } catch (IOException | RuntimeException e) {
                        if (r.replied) parts.failedAfterReplying(r, e);
                        throw e;
                    }
                    for (ByteBuffer piece : part) piece.flip();
                    if (!parts.data(r, pos, part, n, lastRun && pos + n == end)) return;
                    pos += n;
                }
            }
        } finally {
            parts.end(r);
        }
    }

    /** Holes are looked for only where the reply can send them and the device may have some. */
    private boolean holesAllowed(Request r) {
        return session.structuredReplies() && (r.flags & CMD_FLAG_DF) == 0
                && device.capabilities().has(Capability.HOLES);
    }

    /**
     * BlockDevice.readFully and BlockDevice.write move every buffer's position to its limit; one that left bytes
     * behind read or wrote less than asked, which must be an error reply, never a reply with stale bytes or a write
     * half done. The server's one check that every byte moved, whatever the device.
     */
    private void checkTransferred(ByteBuffer[] buffers, String operation, long offset, long length) throws IOException {
        long left = Buffers.remaining(buffers);
        if (left > 0) {
            throw new IOException(device + ": BlockDevice." + operation + " at " + offset + " (+" + length + ") left "
                    + left + " bytes of the buffers behind their positions");
        }
    }

    static String messageOf(Throwable e) {
        return e.getMessage() != null ? e.getMessage() : e.toString();
    }

    /**
     * {@return what the client is told of a failed request}: the operation, its range and the errno, such as
     * {@code write at 19136512 (+262144): No space left on device (ENOSPC)}. The failure's own message names the
     * server's file and system call, which are the server's business: it goes to the server's log only.
     */
    static String replyMessage(Request r, int errno) {
        String operation = commandName(r.type).toLowerCase(java.util.Locale.ROOT).replace('_', ' ');
        String where = r.type == CMD_FLUSH ? "" : " at " + Long.toUnsignedString(r.offset) + " (+" + r.length + ")";
        return operation + where + ": " + Errno.description(errno) + " (" + Errno.name(errno) + ")";
    }

    /**
     * Makes r's reply an error reply: the NBD error nearest the failure's errno, and {@link #replyMessage}. The
     * errno is taken from the failure once, here, and travels as a value from then on.
     */
    static void failed(Request r, Throwable e, ReplyEncoder replies) {
        int errno = DeviceException.errnoOf(e);
        r.error = Errno.toNbd(errno);
        replies.error(r, r.error, replyMessage(r, errno));
    }
}

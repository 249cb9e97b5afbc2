package io.pagewise.nbd.server;

import static io.pagewise.device.DeviceException.EINVAL;
import static io.pagewise.nbd.wire.Protocol.*;

import io.pagewise.Extent;
import io.pagewise.internal.Buffers;
import io.pagewise.internal.Errno;
import io.pagewise.device.BlockDevice;
import io.pagewise.device.DeviceException;
import io.pagewise.device.ZeroFlag;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * Executes checked requests on the export and leaves each reply in its request. A request travels whole: a READ
 * is one {@link BlockDevice#readFully(ByteBuffer[], long)} per data run (one, unless structured replies send holes as
 * holes), a WRITE one {@link BlockDevice#write(ByteBuffer[], long, boolean)} whose FUA makes that write durable by
 * itself. Only a READ or WRITE longer than the connection's share of the in-flight budget is split: one call per
 * share-sized part, each part of a FUA WRITE durable by itself.
 */
final class RequestExecutor {
    /** Sends the reply of a READ longer than a share part by part, under the connection's sending lock. */
    interface PartSender {
        /** Takes the sending lock; false when the connection can no longer send (the lock is still taken). */
        boolean begin();

        /** Sends the segments r holds as the next part of its reply; false when sending broke. */
        boolean send(Request r);

        /** Ends the connection: a reply already begun cannot be finished. */
        void abort(IOException why);

        /** Releases the sending lock. */
        void end(Request r);
    }

    private final BlockDevice export;
    private final Session session;
    private final ReplyEncoder replies;
    private final PartSender sender;
    private final int share;

    RequestExecutor(BlockDevice export, Session session, ReplyEncoder replies, PartSender sender, int share) {
        this.export = export;
        this.session = session;
        this.replies = replies;
        this.sender = sender;
        this.share = share;
    }

    /** Executes the request and leaves its reply in r's segments (none when the reply already went out). */
    void execute(Request r) throws IOException {
        switch (r.type) {
            case CMD_READ:
                if (r.length > share) {
                    readInParts(r);
                } else {
                    read(r);
                }
                return;
            case CMD_WRITE:
                write(r);
                break;
            case CMD_FLUSH:
                export.flush();
                break;
            case CMD_TRIM:
                export.trim(r.offset, r.length, r.fua());
                break;
            case CMD_WRITE_ZEROES:
                export.zero(r.offset, r.length, ZeroFlag.of((r.flags & CMD_FLAG_NO_HOLE) == 0,
                        (r.flags & CMD_FLAG_FAST_ZERO) != 0, r.fua()));
                break;
            case CMD_CACHE:
                export.cache(r.offset, r.length);
                break;
            case CMD_BLOCK_STATUS:
                replies.blockStatus(r, export.extents(r.offset, r.length, ReplyEncoder.descriptorLimit(r)));
                return;
            default:
                throw new DeviceException(EINVAL, "unknown command " + r.type);
        }
        replies.ok(r);
    }

    private void write(Request r) throws IOException {
        if (!r.writtenWhileReceiving) {
            ByteBuffer[] payload = r.payload();
            export.write(payload, r.offset, r.fua());
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
                    export.write(part, r.offset + done, r.fua());
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
        planRuns(r);
        for (int k = 0; k < r.runs; k++) {
            if (r.runHole[k]) continue;
            ByteBuffer[] run = r.slices(r.runStart[k], r.runLength[k]);
            export.readFully(run, r.offset + r.runStart[k]);
            checkTransferred(run, "readFully", r.offset + r.runStart[k], r.runLength[k]);
        }
        replies.readReply(r);
    }

    /**
     * A READ longer than a share: each part is read and sent before the next one is read, under the sending lock,
     * so the request holds one share of buffers. With structured replies each part is a chunk of its own, and a
     * failure after the first one is an error chunk. A simple reply, or a structured one with DF, is one header
     * for all the data: a failure after the header has gone out cannot be told, so it ends the connection, as the
     * spec asks. A failure before anything went out is an ordinary error reply.
     */
    private void readInParts(Request r) throws IOException {
        planRuns(r);
        boolean chunked = session.structuredReplies() && (r.flags & CMD_FLAG_DF) == 0;
        try {
            if (!sender.begin()) {
                r.replied = true;
                return;
            }
            for (int k = 0; k < r.runs; k++) {
                long end = r.runStart[k] + r.runLength[k];
                int last = k == r.runs - 1 ? REPLY_FLAG_DONE : 0;
                if (r.runHole[k]) {
                    ReplyEncoder.start(r);
                    replies.holeChunk(r, last, r.offset + r.runStart[k], r.runLength[k]);
                    if (!sendPart(r)) return;
                    continue;
                }
                for (long pos = r.runStart[k]; pos < end; ) {
                    ByteBuffer[] part = r.ready(end - pos, share);
                    long n = Buffers.remaining(part);
                    try {
                        export.readFully(part, r.offset + pos);
                        checkTransferred(part, "readFully", r.offset + pos, n);
                    } catch (IOException | RuntimeException e) {
                        if (r.replied) failAfterReplying(r, e, chunked);
                        throw e;
                    }
                    ReplyEncoder.start(r);
                    if (chunked) {
                        replies.dataChunkHeader(r, pos + n == end ? last : 0, r.offset + pos, n);
                    } else if (!r.replied) {
                        replies.wholeReadHeader(r);
                    }
                    for (ByteBuffer piece : part) r.addSegment(piece.flip());
                    if (!sendPart(r)) return;
                    pos += n;
                }
            }
        } finally {
            sender.end(r);
        }
    }

    private boolean sendPart(Request r) {
        r.replied = true;
        return sender.send(r);
    }

    /** A READ failed after part of its reply went out: an error chunk ends a chunked reply, else the connection ends. */
    private void failAfterReplying(Request r, Exception e, boolean chunked) {
        if (chunked) {
            replies.error(r, errorOf(e), messageOf(e));
            sender.send(r);
            return;
        }
        sender.abort(new IOException("READ " + Long.toUnsignedString(r.offset) + "+" + r.length
                + " failed after its reply began, which a reply without error chunks cannot tell: " + e.getMessage()));
    }

    /**
     * BlockDevice.readFully and BlockDevice.write move every buffer's position to its limit; one that left bytes behind read
     * or wrote less than asked, which must be an error reply, never a reply with stale bytes or a write half done.
     */
    private void checkTransferred(ByteBuffer[] buffers, String operation, long offset, long length) throws IOException {
        long left = Buffers.remaining(buffers);
        if (left > 0) {
            throw new IOException(export + ": BlockDevice." + operation + " at " + offset + " (+" + length + ") left "
                    + left + " bytes of the buffers behind their positions");
        }
    }

    /** Splits the READ range into data and hole runs (one data run unless structured replies allow holes). */
    private void planRuns(Request r) {
        r.runs = 0;
        if (r.length == 0) return;
        boolean holes = session.structuredReplies() && (r.flags & CMD_FLAG_DF) == 0 && export.mayHaveHoles();
        long covered = 0;
        if (holes) {
            try {
                for (Extent extent : export.extents(r.offset, r.length, Request.MAX_CHUNKS)) {
                    long start = Math.max(extent.offset(), r.offset) - r.offset;
                    long end = Math.min(extent.end(), r.offset + r.length) - r.offset;
                    if (start != covered || end <= start) break;
                    boolean hole = extent.hole() && r.runs < Request.MAX_CHUNKS - 1;
                    if (r.runs > 0 && r.runHole[r.runs - 1] == hole) {
                        r.runLength[r.runs - 1] += end - start;
                    } else if (r.runs == Request.MAX_CHUNKS - 1) {
                        break;
                    } else {
                        r.runStart[r.runs] = start;
                        r.runLength[r.runs] = end - start;
                        r.runHole[r.runs] = hole;
                        r.runs++;
                    }
                    covered = end;
                }
            } catch (IOException | RuntimeException e) {
                r.runs = 0;
                covered = 0;
            }
        }
        if (covered < r.length) {
            if (r.runs > 0 && !r.runHole[r.runs - 1]) {
                r.runLength[r.runs - 1] += r.length - covered;
            } else {
                r.runStart[r.runs] = covered;
                r.runLength[r.runs] = r.length - covered;
                r.runHole[r.runs] = false;
                r.runs++;
            }
        }
    }

    static String messageOf(Throwable e) {
        return e.getMessage() != null ? e.getMessage() : e.toString();
    }

    /** The NBD error for a failure: the NBD error nearest its errno. */
    static int errorOf(Throwable e) {
        return Errno.toNbd(DeviceException.errnoOf(e));
    }
}

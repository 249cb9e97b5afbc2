package io.pagewise.nbd.server;

import static io.pagewise.nbd.NbdException.EINVAL;
import static io.pagewise.nbd.NbdException.EIO;
import static io.pagewise.nbd.NbdException.ENOSPC;
import static io.pagewise.nbd.NbdException.EPERM;
import static io.pagewise.nbd.NbdException.ESHUTDOWN;
import static io.pagewise.nbd.wire.Protocol.*;

import io.pagewise.Extent;
import io.pagewise.SystemCallFailure;
import io.pagewise.internal.Errno;
import io.pagewise.internal.Uninterruptibly;
import io.pagewise.nbd.Export;
import io.pagewise.nbd.NbdException;
import io.pagewise.nbd.wire.SocketIo;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The transmission phase of one connection, served by a few threads of its own (nbdkit's model). Each thread takes
 * the receiving lock, reads one request (and its WRITE payload), lets go, executes it, and sends the reply whole
 * under the sending lock; replies go out in any order. A request is read, executed and answered by one thread, so
 * its payload buffer is still in that CPU's cache when it is copied to the file or the socket, and no request
 * waits for a hand-off to another thread. A client that stops reading replies blocks only its own threads.
 * A READ or WRITE longer than {@link ServerContext#payloadPiece()} holds buffers for one piece and is received,
 * executed and answered one piece at a time, so that requests never hold more than the in-flight budget.
 */
public final class Transmission {
    /** Content chunks in one structured READ reply; extents beyond that are sent as data. */
    private static final int MAX_CHUNKS = 64;
    private static final int MAX_DESCRIPTORS = 256;
    private static final int HEADER_AREA = 4096;
    private static final int MAX_MESSAGE = 256;

    private final SocketChannel channel;
    private final Session session;
    private final Export export;
    private final String who;
    private final ServerContext context;
    /** Payload bytes this connection may hold: its share of the server-wide budget. */
    private final ByteBudget connectionBudget;
    private final ReentrantLock receiving = new ReentrantLock();
    private final ReentrantLock sending = new ReentrantLock();
    /** Guarded by receiving. */
    private final ByteBuffer head = ByteBuffer.allocateDirect(REQUEST_HEADER_SIZE);
    private final ByteBuffer scratch = ByteBuffer.allocateDirect(64 * 1024);
    /** Set once no more requests are to be read: end of stream, DISC, a broken protocol or a failed send. */
    private volatile boolean ending;
    /** Why reading stopped, when it was not the client's orderly end; guarded by receiving. */
    private IOException failure;
    /** Guarded by sending. */
    private boolean sendFailed;

    public Transmission(SocketChannel channel, Session session, String who, ServerContext context) {
        this.channel = channel;
        this.session = session;
        this.export = session.entry().export();
        this.who = who;
        this.context = context;
        this.connectionBudget = new ByteBudget(context.connectionInflightBytes());
    }

    /** Serves requests until the client disconnects or breaks the protocol; returns once nothing is in flight. */
    public void serve() throws IOException {
        String name = Thread.currentThread().getName();
        Thread[] helpers = new Thread[context.threadsPerConnection() - 1];
        for (int i = 0; i < helpers.length; i++) {
            helpers[i] = new Thread(this::serveRequests, name + "-" + (i + 2));
            helpers[i].setDaemon(true);
            helpers[i].start();
        }
        try {
            serveRequests();
        } finally {
            for (Thread helper : helpers) Uninterruptibly.run(helper::join);
        }
        receiving.lock();
        try {
            if (failure != null) throw failure;
        } finally {
            receiving.unlock();
        }
    }

    /** One of the connection's threads: receive, execute, reply, until the connection ends. */
    private void serveRequests() {
        Request request = new Request();
        try {
            while (receive(request)) {
                context.stats().requestReceived();
                if (request.refusal != null) {
                    request.refused();
                } else {
                    request.run();
                }
                send(request);
                context.stats().requestAnswered();
                release(request);
            }
        } finally {
            release(request);
        }
    }

    /** Reads the next request into r under the receiving lock; false once the connection is ending. */
    private boolean receive(Request r) {
        receiving.lock();
        try {
            if (ending) return false;
            try {
                if (readRequest(r)) return true;
            } catch (InterruptedException e) {
                failure = new InterruptedIOException("interrupted while waiting for in-flight bytes");
            } catch (IOException e) {
                failure = e;
            }
            // Set under the lock, so that no other thread reads what follows a broken request.
            ending = true;
            return false;
        } finally {
            receiving.unlock();
        }
    }

    /** False at the client's orderly end (end of stream between requests, or DISC). */
    private boolean readRequest(Request r) throws IOException, InterruptedException {
        head.clear();
        if (!SocketIo.readFully(channel, head)) return false;
        head.flip();
        int magic = head.getInt();
        if (magic != REQUEST_MAGIC) {
            throw new ProtocolViolation("bad request magic 0x" + Integer.toHexString(magic));
        }
        int flags = head.getShort() & 0xffff;
        int type = head.getShort() & 0xffff;
        long cookie = head.getLong();
        long offset = head.getLong();
        long length = Integer.toUnsignedLong(head.getInt());
        if (type == CMD_DISC) return false;
        r.set(type, flags, cookie, offset, length);
        r.refusal = check(r);
        if (r.refusal != null) {
            // The payload of a refused WRITE is still on the wire: drop it to stay in step.
            if (type == CMD_WRITE) SocketIo.skip(channel, length, scratch);
            return true;
        }
        if (type == CMD_READ || type == CMD_WRITE) {
            // A request holds buffers for at most one payload piece; a longer one is served piece by piece.
            long held = Math.min(length, context.payloadPiece());
            long footprint = PayloadBuffers.footprint(held);
            // The connection's share first: a connection at its cap waits without holding global bytes.
            r.connectionCharge = connectionBudget.acquire(footprint);
            r.charge = context.budget().acquire(footprint);
            r.pieceCount = context.buffers().take(held, r.pieces);
        }
        if (type == CMD_WRITE) {
            if (length > context.payloadPiece()) {
                receiveAndWriteInPieces(r);
            } else {
                for (int i = 0; i < r.pieceCount; i++) SocketIo.readExactly(channel, r.pieces[i]);
                for (int i = 0; i < r.pieceCount; i++) r.pieces[i].flip();
            }
        }
        return true;
    }

    /**
     * A WRITE longer than a payload piece, received and written one piece at a time by the thread that holds the
     * receiving lock (what follows on the socket is this payload anyway). After a failed write the rest of the
     * payload is still read, to stay in step; the failure is answered once the request runs.
     */
    private void receiveAndWriteInPieces(Request r) throws IOException {
        for (long done = 0; done < r.length; ) {
            int used = r.ready(r.length - done);
            long at = r.offset + done;
            for (int i = 0; i < used; i++) {
                SocketIo.readExactly(channel, r.pieces[i]);
                done += r.pieces[i].flip().remaining();
            }
            if (r.writeFailure != null) continue;
            try {
                for (int i = 0; i < used; i++) {
                    int n = r.pieces[i].remaining();
                    export.write(r.pieces[i], at, false);
                    checkTransferred(r.pieces[i], "write", at, n);
                    at += n;
                }
            } catch (IOException | RuntimeException e) {
                r.writeFailure = e;
            }
        }
        r.writtenWhileReceiving = true;
    }

    /**
     * Writes r's reply whole under the sending lock. After a failed write nothing more is sent, and the connection's
     * reading is stopped.
     */
    private void send(Request r) {
        sending.lock();
        try {
            if (!sendFailed && !r.replied) SocketIo.writeFully(channel, r.segments, r.segmentCount);
        } catch (IOException e) {
            sendingBroke(e);
        } finally {
            sending.unlock();
            clearSegments(r);
        }
    }

    /** After a failed send nothing more is sent, and the connection's reading stops; the caller holds the sending lock. */
    private void sendingBroke(IOException e) {
        sendFailed = true;
        ending = true;
        // A socket closed under the connection (the server cutting it) was logged by whoever closed it.
        if (!(e instanceof ClosedChannelException)) {
            context.log().log(Level.WARNING, who + ": cannot send replies, closing: " + e.getMessage());
        }
        try {
            channel.shutdownInput();
        } catch (IOException ignored) {
            // already closed
        }
    }

    private static void clearSegments(Request r) {
        for (int i = 0; i < r.segmentCount; i++) r.segments[i] = null;
        r.segmentCount = 0;
    }

    /** Gives back r's payload buffers and budget shares; safe to call twice. */
    private void release(Request r) {
        if (r.pieceCount > 0) context.buffers().give(r.pieces, r.pieceCount);
        r.pieceCount = 0;
        if (r.charge > 0) context.budget().release(r.charge);
        r.charge = 0;
        if (r.connectionCharge > 0) connectionBudget.release(r.connectionCharge);
        r.connectionCharge = 0;
    }

    /** Null when the request may run, else why not (and request.error says which error to answer). */
    private String check(Request r) {
        int tf = session.transmissionFlags();
        boolean writable = (tf & TF_READ_ONLY) == 0;
        int allowed = (tf & TF_SEND_FUA) != 0 ? CMD_FLAG_FUA : 0;
        switch (r.type) {
            case CMD_READ:
                if ((tf & TF_SEND_DF) != 0) allowed |= CMD_FLAG_DF;
                break;
            case CMD_WRITE:
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
        if (r.type == CMD_BLOCK_STATUS && !session.allocationContext()) {
            return r.refuse(EINVAL, "BLOCK_STATUS without a selected meta context");
        }
        // Every block-status descriptor MUST have a nonzero length, so there is no valid answer to length 0.
        if (r.type == CMD_BLOCK_STATUS && r.length == 0) return r.refuse(EINVAL, "BLOCK_STATUS of length 0");
        if ((r.type == CMD_READ || r.type == CMD_WRITE) && r.length > context.maxPayload()) {
            return r.refuse(EINVAL, "length " + r.length + " is over the maximum block size " + context.maxPayload());
        }
        if (r.type != CMD_FLUSH && (r.offset < 0 || r.offset + r.length < 0 || r.offset + r.length > session.size())) {
            // The spec asks for ENOSPC when a write goes past the end, EINVAL for everything else.
            int error = r.type == CMD_WRITE || r.type == CMD_WRITE_ZEROES ? ENOSPC : EINVAL;
            return r.refuse(error, "range " + Long.toUnsignedString(r.offset) + "+" + r.length
                    + " is past the end of the export (" + session.size() + " bytes)");
        }
        return null;
    }

    /** One request: its header, its payload buffers, and its reply area; reused by one of the connection's threads. */
    private final class Request {
        int type;
        int flags;
        long cookie;
        long offset;
        long length;
        int error;
        /** Why the request is answered with an error without running, or null. */
        String refusal;
        long charge;
        long connectionCharge;
        int pieceCount;
        long started;
        final ByteBuffer[] pieces = new ByteBuffer[MAX_PAYLOAD_PIECES];
        final ByteBuffer area = ByteBuffer.allocateDirect(HEADER_AREA);
        final ByteBuffer[] segments = new ByteBuffer[2 * MAX_CHUNKS + MAX_PAYLOAD_PIECES * 2 + 4];
        int segmentCount;
        final long[] runStart = new long[MAX_CHUNKS];
        final long[] runLength = new long[MAX_CHUNKS];
        final boolean[] runHole = new boolean[MAX_CHUNKS];
        int runs;
        /** A WRITE longer than a payload piece was already written while its payload was received. */
        boolean writtenWhileReceiving;
        /** Why such a WRITE failed, or null. */
        Exception writeFailure;
        /** The reply (or part of it) went out while the request ran: a READ longer than a payload piece. */
        boolean replied;

        void set(int type, int flags, long cookie, long offset, long length) {
            this.type = type;
            this.flags = flags;
            this.cookie = cookie;
            this.offset = offset;
            this.length = length;
            this.error = 0;
            this.started = System.nanoTime();
            this.writtenWhileReceiving = false;
            this.writeFailure = null;
            this.replied = false;
        }

        /** Readies the first pieces to take the next min(bytes, piece) bytes of payload; returns how many. */
        int ready(long bytes) {
            int used = 0;
            for (long left = Math.min(bytes, context.payloadPiece()); left > 0; used++) {
                ByteBuffer piece = pieces[used].clear();
                piece.limit((int) Math.min(piece.capacity(), left));
                left -= piece.limit();
            }
            return used;
        }

        String refuse(int error, String why) {
            this.error = error;
            return why;
        }

        /** Prepares the error reply of a request refused before it ran. */
        void refused() {
            logRequest(refusal);
            context.stats().request(type, length, true);
            prepareError(this, error, refusal);
        }

        /** Executes the request and prepares its reply, an error reply if it failed. */
        void run() {
            String failure = null;
            try {
                execute(this);
            } catch (Throwable e) {
                error = errorOf(e);
                failure = e.getMessage() != null ? e.getMessage() : e.toString();
                context.log().log(Level.WARNING, who + ": " + commandName(type) + " " + Long.toUnsignedString(offset)
                        + "+" + length + " failed: " + failure);
                prepareError(this, error, failure);
            } finally {
                context.stats().request(type, length, failure != null);
                logRequest(failure);
            }
        }

        private void logRequest(String failure) {
            if (!context.log().isLoggable(Level.DEBUG)) return;
            context.log().log(Level.DEBUG, String.format(Locale.ROOT, "%s: %s offset=%s length=%d flags=0x%x cookie=%d -> %s (%.3f ms)",
                    who, commandName(type), Long.toUnsignedString(offset), length, flags, cookie,
                    failure == null ? "ok" : "error " + error + ": " + failure, (System.nanoTime() - started) / 1e6));
        }
    }

    private static final int MAX_PAYLOAD_PIECES = MAX_PAYLOAD / PayloadBuffers.LARGE + 1;

    /** Executes the request and leaves its reply in r.segments. */
    private void execute(Request r) throws IOException {
        boolean fua = (r.flags & CMD_FLAG_FUA) != 0;
        switch (r.type) {
            case CMD_READ:
                read(r);
                return;
            case CMD_WRITE: {
                if (r.writtenWhileReceiving) {
                    rethrow(r.writeFailure);
                    if (fua) export.flush();
                    break;
                }
                long at = r.offset;
                for (int i = 0; i < r.pieceCount; i++) {
                    ByteBuffer piece = r.pieces[i];
                    int n = piece.remaining();
                    export.write(piece, at, fua && r.pieceCount == 1);
                    checkTransferred(piece, "write", at, n);
                    at += n;
                }
                if (fua && r.pieceCount > 1) export.flush();
                break;
            }
            case CMD_FLUSH:
                export.flush();
                break;
            case CMD_TRIM:
                export.trim(r.offset, r.length, fua);
                break;
            case CMD_WRITE_ZEROES:
                export.zero(r.offset, r.length, (r.flags & CMD_FLAG_NO_HOLE) == 0, (r.flags & CMD_FLAG_FAST_ZERO) != 0, fua);
                break;
            case CMD_CACHE:
                export.cache(r.offset, r.length);
                break;
            case CMD_BLOCK_STATUS:
                blockStatus(r);
                return;
            default:
                throw new NbdException(EINVAL, "unknown command " + r.type);
        }
        prepareOk(r);
    }

    private static void rethrow(Exception failure) throws IOException {
        if (failure instanceof IOException) throw (IOException) failure;
        if (failure != null) throw (RuntimeException) failure;
    }

    private void read(Request r) throws IOException {
        if (r.length > context.payloadPiece()) {
            readInPieces(r);
            return;
        }
        planRuns(r);
        int pieceSize = r.pieceCount == 0 ? 1 : r.pieces[0].capacity();
        // Read every data run first: an error then becomes a clean error reply instead of a torn one.
        for (int k = 0; k < r.runs; k++) {
            if (r.runHole[k]) continue;
            long start = r.runStart[k];
            long end = start + r.runLength[k];
            for (long pos = start; pos < end; ) {
                int i = (int) (pos / pieceSize);
                int within = (int) (pos % pieceSize);
                int n = (int) Math.min(pieceSize - within, end - pos);
                ByteBuffer slice = r.pieces[i].slice(within, n);
                export.readFully(slice, r.offset + pos);
                checkTransferred(slice, "readFully", r.offset + pos, n);
                pos += n;
            }
        }
        ByteBuffer area = r.area.clear();
        r.segmentCount = 0;
        if (!session.structuredReplies()) {
            addSegment(r, area.slice(0, SIMPLE_REPLY_HEADER_SIZE).putInt(SIMPLE_REPLY_MAGIC).putInt(0).putLong(r.cookie).flip());
            addData(r, 0, r.length, pieceSize);
            return;
        }
        if (r.runs == 0) {
            addSegment(r, chunk(r, REPLY_FLAG_DONE, REPLY_TYPE_NONE, 0, 0).flip());
            return;
        }
        for (int k = 0; k < r.runs; k++) {
            int done = k == r.runs - 1 ? REPLY_FLAG_DONE : 0;
            long absolute = r.offset + r.runStart[k];
            if (r.runHole[k]) {
                addSegment(r, chunk(r, done, REPLY_TYPE_OFFSET_HOLE, 12, 12).putLong(absolute)
                        .putInt((int) r.runLength[k]).flip());
            } else {
                addSegment(r, chunk(r, done, REPLY_TYPE_OFFSET_DATA, 8 + r.runLength[k], 8).putLong(absolute).flip());
                addData(r, r.runStart[k], r.runLength[k], pieceSize);
            }
        }
    }

    /**
     * A READ longer than a payload piece: each piece is read and sent before the next one is read, under the sending
     * lock, so the request holds one piece of buffers. With structured replies each piece is a chunk of its own, and
     * a failure after the first one is an error chunk. A simple reply, or a structured one with DF, is one header
     * for all the data: a failure after the header has gone out cannot be told, so it ends the connection, as the
     * spec asks. A failure before anything went out is an ordinary error reply.
     */
    private void readInPieces(Request r) throws IOException {
        planRuns(r);
        boolean chunked = session.structuredReplies() && (r.flags & CMD_FLAG_DF) == 0;
        sending.lock();
        try {
            if (sendFailed) {
                r.replied = true;
                return;
            }
            for (int k = 0; k < r.runs; k++) {
                long end = r.runStart[k] + r.runLength[k];
                int last = k == r.runs - 1 ? REPLY_FLAG_DONE : 0;
                if (r.runHole[k]) {
                    r.area.clear();
                    addSegment(r, chunk(r, last, REPLY_TYPE_OFFSET_HOLE, 12, 12).putLong(r.offset + r.runStart[k])
                            .putInt((int) r.runLength[k]).flip());
                    if (!sendPiece(r)) return;
                    continue;
                }
                for (long pos = r.runStart[k]; pos < end; ) {
                    int used = r.ready(end - pos);
                    int n = 0;
                    try {
                        for (int i = 0; i < used; i++) {
                            int length = r.pieces[i].remaining();
                            export.readFully(r.pieces[i], r.offset + pos + n);
                            checkTransferred(r.pieces[i], "readFully", r.offset + pos + n, length);
                            n += length;
                            r.pieces[i].flip();
                        }
                    } catch (IOException | RuntimeException e) {
                        if (r.replied) failAfterReplying(r, e, chunked);
                        throw e;
                    }
                    r.area.clear();
                    if (chunked) {
                        int done = pos + n == end ? last : 0;
                        addSegment(r, chunk(r, done, REPLY_TYPE_OFFSET_DATA, 8 + n, 8).putLong(r.offset + pos).flip());
                    } else if (!r.replied && session.structuredReplies()) {
                        addSegment(r, chunk(r, REPLY_FLAG_DONE, REPLY_TYPE_OFFSET_DATA, 8 + r.length, 8).putLong(r.offset).flip());
                    } else if (!r.replied) {
                        addSegment(r, r.area.putInt(SIMPLE_REPLY_MAGIC).putInt(0).putLong(r.cookie).flip());
                    }
                    for (int i = 0; i < used; i++) addSegment(r, r.pieces[i]);
                    if (!sendPiece(r)) return;
                    pos += n;
                }
            }
        } finally {
            sending.unlock();
            clearSegments(r);
        }
    }

    /** Sends the segments prepared for one piece of a reply; false when sending broke. The sending lock is held. */
    private boolean sendPiece(Request r) {
        r.replied = true;
        try {
            SocketIo.writeFully(channel, r.segments, r.segmentCount);
            return true;
        } catch (IOException e) {
            sendingBroke(e);
            return false;
        } finally {
            clearSegments(r);
        }
    }

    /** A READ failed after part of its reply went out: an error chunk ends a chunked reply, else the connection ends. */
    private void failAfterReplying(Request r, Exception e, boolean chunked) {
        if (chunked) {
            prepareError(r, errorOf(e), e.getMessage() != null ? e.getMessage() : e.toString());
            sendPiece(r);
            return;
        }
        sendingBroke(new IOException("READ " + Long.toUnsignedString(r.offset) + "+" + r.length
                + " failed after its reply began, which a reply without error chunks cannot tell: " + e.getMessage()));
        try {
            channel.shutdownOutput();
        } catch (IOException ignored) {
            // already closed
        }
    }

    /**
     * Export.readFully and Export.write move the buffer's position to its limit; one that left bytes behind read or
     * wrote less than asked, which must be an error reply, never a reply with stale bytes or a write half done.
     */
    private void checkTransferred(ByteBuffer buffer, String operation, long offset, int length) throws IOException {
        if (buffer.hasRemaining()) {
            throw new IOException(export + ": Export." + operation + " at " + offset + " (+" + length + ") left "
                    + buffer.remaining() + " bytes of the buffer behind its position");
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
                for (Extent extent : export.extents(r.offset, r.length)) {
                    long start = Math.max(extent.offset(), r.offset) - r.offset;
                    long end = Math.min(extent.end(), r.offset + r.length) - r.offset;
                    if (start != covered || end <= start) break;
                    boolean hole = extent.hole() && r.runs < MAX_CHUNKS - 1;
                    if (r.runs > 0 && r.runHole[r.runs - 1] == hole) {
                        r.runLength[r.runs - 1] += end - start;
                    } else if (r.runs == MAX_CHUNKS - 1) {
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

    private void blockStatus(Request r) throws IOException {
        List<Extent> extents = export.extents(r.offset, r.length);
        int limit = (r.flags & CMD_FLAG_REQ_ONE) != 0 ? 1 : MAX_DESCRIPTORS;
        ByteBuffer area = r.area.clear();
        area.position(CHUNK_HEADER_SIZE + 4);
        int count = 0;
        long covered = r.offset;
        int lastFlags = -1;
        for (Extent extent : extents) {
            long start = Math.max(extent.offset(), covered);
            long end = Math.min(extent.end(), r.offset + r.length);
            if (start != covered || end <= start) break;
            int status = extent.hole() ? STATE_HOLE | STATE_ZERO : 0;
            if (count > 0 && status == lastFlags) {
                int at = area.position() - 8;
                area.putInt(at, (int) (Integer.toUnsignedLong(area.getInt(at)) + end - start));
            } else {
                if (count == limit) break;
                area.putInt((int) (end - start)).putInt(status);
                count++;
                lastFlags = status;
            }
            covered = end;
        }
        if (count == 0) {
            area.putInt((int) r.length).putInt(0);
            count = 1;
        }
        int payload = area.position() - CHUNK_HEADER_SIZE;
        area.position(0);
        chunk(r, REPLY_FLAG_DONE, REPLY_TYPE_BLOCK_STATUS, payload, 4).putInt(BASE_ALLOCATION_ID);
        r.segmentCount = 0;
        addSegment(r, area.slice(0, CHUNK_HEADER_SIZE + payload));
    }

    /**
     * Carves the next chunk of the request's reply area: a structured reply header, then room for extra bytes of
     * payload that the caller puts before flipping it.
     */
    private static ByteBuffer chunk(Request r, int flags, int type, long payloadLength, int extra) {
        ByteBuffer area = r.area;
        ByteBuffer chunk = area.slice(area.position(), CHUNK_HEADER_SIZE + extra);
        area.position(area.position() + CHUNK_HEADER_SIZE + extra);
        return chunk.putInt(STRUCTURED_REPLY_MAGIC).putShort((short) flags).putShort((short) type).putLong(r.cookie)
                .putInt((int) payloadLength);
    }

    private void prepareOk(Request r) {
        r.segmentCount = 0;
        ByteBuffer area = r.area.clear();
        if (session.structuredReplies()) {
            addSegment(r, chunk(r, REPLY_FLAG_DONE, REPLY_TYPE_NONE, 0, 0).flip());
        } else {
            addSegment(r, area.putInt(SIMPLE_REPLY_MAGIC).putInt(0).putLong(r.cookie).flip());
        }
    }

    private void prepareError(Request r, int error, String message) {
        r.segmentCount = 0;
        ByteBuffer area = r.area.clear();
        if (session.structuredReplies()) {
            byte[] text = message.getBytes(StandardCharsets.UTF_8);
            int n = Math.min(text.length, MAX_MESSAGE);
            addSegment(r, chunk(r, REPLY_FLAG_DONE, REPLY_TYPE_ERROR, 6 + n, 6 + n).putInt(error).putShort((short) n)
                    .put(text, 0, n).flip());
        } else {
            addSegment(r, area.putInt(SIMPLE_REPLY_MAGIC).putInt(error).putLong(r.cookie).flip());
        }
    }

    private void addData(Request r, long start, long length, int pieceSize) {
        for (long pos = start; pos < start + length; ) {
            int i = (int) (pos / pieceSize);
            int within = (int) (pos % pieceSize);
            int n = (int) Math.min(pieceSize - within, start + length - pos);
            addSegment(r, r.pieces[i].slice(within, n));
            pos += n;
        }
    }

    private static void addSegment(Request r, ByteBuffer segment) {
        r.segments[r.segmentCount++] = segment;
    }

    /** The NBD error for a failure. */
    static int errorOf(Throwable e) {
        if (e instanceof NbdException) return ((NbdException) e).error();
        if (e instanceof SystemCallFailure) return Errno.toNbd(((SystemCallFailure) e).errno());
        if (e instanceof AccessDeniedException) return EPERM;
        if (e instanceof ClosedChannelException) return ESHUTDOWN;
        if (e instanceof IllegalArgumentException) return EINVAL;
        String message = String.valueOf(e.getMessage());
        if (message.contains("No space left")) return ENOSPC;
        return EIO;
    }
}

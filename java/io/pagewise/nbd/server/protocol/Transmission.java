package io.pagewise.nbd.server.protocol;

import io.pagewise.internal.Uninterruptibly;
import io.pagewise.nbd.tls.TlsChannel;
import io.pagewise.nbd.wire.Protocol;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.nio.channels.ByteChannel;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.GatheringByteChannel;
import java.nio.channels.SocketChannel;
import java.util.Locale;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The transmission phase of one connection, served by a few threads of its own (nbdkit's model). Each thread takes
 * the receiving lock, reads one request (and its WRITE payload) with the {@link RequestReader}, lets go, executes
 * it with the {@link RequestExecutor}, and sends the reply that the {@link ReplyEncoder} put in the request, whole,
 * under the sending lock; replies go out in any order. A request is read, executed and answered by one thread, so
 * its payload buffers are still in that CPU's cache when they are copied to the file or the socket, and no request
 * waits for a hand-off to another thread. A client that stops reading replies blocks only its own threads.
 */
public final class Transmission {
    /** The socket: shut down here to stop reading, whether or not TLS runs over it. */
    private final SocketChannel channel;
    /** Where replies are written: the socket, or the TLS channel over it. */
    private final GatheringByteChannel out;
    private final String who;
    /** The export's name, which its requests are counted under. */
    private final String export;
    private final ServerContext context;
    private final RequestReader reader;
    private final RequestExecutor executor;
    private final ReplyEncoder replies;
    private final Parts parts = new Parts();
    private final IdleWatch idle;
    private final ReplyWatch replyWatch;
    /** The most bytes of a reply written by one call, so that the reply watch sees a slow reader's progress. */
    static final long WRITE_CHUNK = 1 << 20;
    private final ReentrantLock receiving = new ReentrantLock();
    private final ReentrantLock sending = new ReentrantLock();
    /** Set once no more requests are to be read: end of stream, DISC, a broken protocol or a failed send. */
    private volatile boolean ending;
    /** Why reading stopped, when it was not the client's orderly end; guarded by receiving. */
    private IOException failure;
    /** Guarded by sending. */
    private boolean sendFailed;

    public Transmission(SocketChannel channel, Session session, String who, ServerContext context) {
        this(channel, null, session, who, context, IdleWatch.off(), ReplyWatch.off());
    }

    /**
     * Serves a session on channel, through tls (which runs over channel) when it is not null; idle counts the requests
     * in flight and the bytes received, replyWatch how long a reply goes without the socket taking a byte of it.
     */
    public Transmission(SocketChannel channel, TlsChannel tls, Session session, String who, ServerContext context,
                        IdleWatch idle, ReplyWatch replyWatch) {
        this.channel = channel;
        this.out = tls != null ? tls : channel;
        ByteChannel in = tls != null ? tls : channel;
        this.who = who;
        this.export = session.entry().name();
        this.context = context;
        this.idle = idle;
        this.replyWatch = replyWatch;
        this.reader = new RequestReader(idle.watching(in), session, context,
                new ByteBudget(context.connectionInflightBytes()));
        this.replies = new ReplyEncoder(session);
        this.executor = new RequestExecutor(session.entry().device(), session, context.payloadPiece());
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
        idle.start();
        replyWatch.start();
        try {
            serveRequests();
        } finally {
            for (Thread helper : helpers) Uninterruptibly.run(helper::join);
            idle.stop();
            replyWatch.stop();
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
                    refused(request);
                } else {
                    run(request);
                }
                send(request);
                idle.requestEnded();
                context.stats().requestAnswered();
                reader.release(request);
            }
        } finally {
            reader.release(request);
        }
    }

    /**
     * Reads the next request into r under the receiving lock; false once the connection is ending. A WRITE longer
     * than a share is written while its payload is received, since what follows on the socket is that payload.
     */
    private boolean receive(Request r) {
        receiving.lock();
        boolean started = false;
        try {
            if (ending) return false;
            try {
                if (reader.read(r)) {
                    idle.requestStarted();
                    started = true;
                    if (r.refusal == null && r.type == Protocol.CMD_WRITE && reader.isLong(r)) {
                        executor.receiveAndWrite(r, reader);
                    }
                    return true;
                }
            } catch (InterruptedException e) {
                failure = new InterruptedIOException("interrupted while waiting for in-flight bytes");
            } catch (IOException e) {
                failure = e;
            } catch (RuntimeException | Error e) {
                // What follows on the socket is the rest of a request half read, never a request header.
                failure = new IOException("reading a request failed: " + e, e);
            }
            if (started) idle.requestEnded();
            // Set under the lock, so that no other thread reads what follows a broken request.
            ending = true;
            return false;
        } finally {
            receiving.unlock();
        }
    }

    /** Prepares the error reply of a request refused before it ran. */
    private void refused(Request r) {
        context.requestLog().warn(context.log(), () -> who + ": " + Protocol.commandName(r.type) + " "
                + Long.toUnsignedString(r.offset) + "+" + r.length + " refused: " + r.refusal);
        logRequest(r, r.refusal);
        context.stats().request(export, r.type, r.offset, r.length, true, System.nanoTime() - r.started);
        replies.error(r, r.error, r.refusal);
    }

    /** Executes the request and encodes its reply, an error reply if it failed; a long READ's went out in parts. */
    private void run(Request r) {
        String failed = null;
        try {
            executor.execute(r, parts);
            if (!r.replied) replies.reply(r);
        } catch (Throwable e) {
            failed = RequestExecutor.messageOf(e);
            String message = failed;
            context.requestLog().warn(context.log(), () -> who + ": " + Protocol.commandName(r.type) + " "
                    + Long.toUnsignedString(r.offset) + "+" + r.length + " failed: " + message);
            RequestExecutor.failed(r, e, replies);
        } finally {
            context.stats().request(export, r.type, r.offset, r.length, failed != null,
                    System.nanoTime() - r.started);
            logRequest(r, failed);
        }
    }

    private void logRequest(Request r, String failed) {
        if (!context.log().isLoggable(Level.DEBUG)) return;
        context.log().log(Level.DEBUG, String.format(Locale.ROOT, "%s: %s offset=%s length=%d flags=0x%x cookie=%d -> %s (%.3f ms)",
                who, Protocol.commandName(r.type), Long.toUnsignedString(r.offset), r.length, r.flags, r.cookie,
                failed == null ? "ok" : "error " + r.error + ": " + failed, (System.nanoTime() - r.started) / 1e6));
    }

    /**
     * Writes r's reply whole under the sending lock, unless it went out while the request ran. After a failed write
     * nothing more is sent, and the connection's reading is stopped.
     */
    private void send(Request r) {
        sending.lock();
        try {
            if (!sendFailed && !r.replied) write(r);
        } catch (IOException e) {
            sendingBroke(e);
        } finally {
            sending.unlock();
            r.clearSegments();
        }
    }

    /**
     * Writes r's encoded segments whole, under the sending lock, at most {@link #WRITE_CHUNK} bytes of whole segments
     * per call (at least one segment): a blocking write returns only once all it was given is in the socket, and the
     * reply watch learns of progress only between calls.
     */
    private void write(Request r) throws IOException {
        ByteBuffer[] segments = r.segments;
        int count = r.segmentCount;
        replyWatch.sending();
        try {
            int first = 0;
            while (first < count) {
                int end = first + 1;
                long bytes = segments[first].remaining();
                while (end < count && bytes + segments[end].remaining() <= WRITE_CHUNK) bytes += segments[end++].remaining();
                if (out.write(segments, first, end - first) > 0) replyWatch.progressed();
                while (first < count && !segments[first].hasRemaining()) first++;
            }
        } finally {
            replyWatch.sent();
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

    /** A READ sent in parts: each part is encoded and sent here, under the sending lock, as the executor reads it. */
    private final class Parts implements RequestExecutor.ReadParts {
        @Override
        public boolean begin(Request r) {
            sending.lock();
            if (!sendFailed) return true;
            r.replied = true; // nothing more goes out on this connection
            return false;
        }

        @Override
        public boolean hole(Request r, long start, long length, boolean last) {
            replies.holePart(r, start, length, last);
            return sendPart(r);
        }

        @Override
        public boolean data(Request r, long start, ByteBuffer[] part, long length, boolean last) {
            replies.readPart(r, start, part, length, last);
            return sendPart(r);
        }

        @Override
        public void failedAfterReplying(Request r, Exception e) {
            if (replies.chunked(r)) {
                RequestExecutor.failed(r, e, replies);
                sendPart(r);
                return;
            }
            // One header went out for all of the data: a failure after it cannot be told, so the connection ends.
            sendingBroke(new IOException("READ " + Long.toUnsignedString(r.offset) + "+" + r.length
                    + " failed after its reply began, which a reply without error chunks cannot tell: " + e.getMessage()));
            try {
                channel.shutdownOutput();
            } catch (IOException ignored) {
                // already closed
            }
        }

        @Override
        public void end(Request r) {
            if (sending.isHeldByCurrentThread()) sending.unlock();
            r.clearSegments();
        }

        private boolean sendPart(Request r) {
            r.replied = true;
            try {
                write(r);
                return true;
            } catch (IOException e) {
                sendingBroke(e);
                return false;
            } finally {
                r.clearSegments();
            }
        }
    }
}

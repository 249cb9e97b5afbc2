package io.pagewise.nbd.client;

import static io.pagewise.nbd.wire.Protocol.*;

import io.pagewise.Extent;
import io.pagewise.internal.ClosedWithMessage;
import io.pagewise.nbd.client.ExportInfo;
import io.pagewise.nbd.NbdException;
import io.pagewise.nbd.wire.SocketIo;
import io.pagewise.nbd.tls.TlsChannel;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.ByteChannel;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.GatheringByteChannel;
import java.nio.channels.SocketChannel;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One transmission-phase connection: any thread sends requests, one reader thread matches replies to them by
 * cookie and completes their futures. Requests and replies are compact, or extended (32-byte headers, 64-bit
 * lengths) when the handshake negotiated extended headers.
 */
final class ClientConnection {
    /** How long close() lets the goodbye to the server take before it closes the socket under it. */
    static final long CLOSE_GRACE_MILLIS = 2000;
    /**
     * The most BLOCK_STATUS descriptors kept for one request: as many as qemu-nbd sends at most (1 MiB of them),
     * about 5 MiB of Extents. A server that sends more has its extra descriptors dropped.
     */
    public static final int MAX_KEPT_EXTENTS = 1 << 17;

    /** The socket, or the TLS channel over it. */
    private final ByteChannel channel;
    /** The same channel, for gathering writes. */
    private final GatheringByteChannel out;
    private final ReplyReader replies;
    private final String server;
    private final Map<Long, Request> inFlight = new ConcurrentHashMap<>();
    private final AtomicLong cookies = new AtomicLong();
    /** Serialises senders; close() only tries it, so that a sender stuck on a server that stopped reading cannot hold it up. */
    private final ReentrantLock sendLock = new ReentrantLock();
    /** The socket under channel: closing it is what unblocks a stuck send. */
    private final SocketChannel socket;
    private final ByteBuffer requestHeader = ByteBuffer.allocateDirect(EXTENDED_HEADER_SIZE);
    private final boolean extended;
    private final Thread reader;
    private volatile IOException broken;
    private volatile boolean closing;

    /** A request waiting for its reply; readInto (for READ) is exactly as long as the request. */
    public static final class Request {
        final int command;
        final long offset;
        final long length;
        final ByteBuffer readInto;
        final List<Extent> extents;
        /** For a BLOCK_STATUS of a named meta context: its name, and where its descriptors go; else null. */
        final String context;
        final List<BlockStatus> statuses;
        final CompletableFuture<Void> done = new CompletableFuture<>();
        NbdException error;
        /** The ranges (start, end) that data and hole chunks filled so far, in arrival order; for READ. */
        private long[] filled = new long[8];
        private int filledCount;

        public Request(int command, long offset, long length, ByteBuffer readInto, List<Extent> extents) {
            this.command = command;
            this.offset = offset;
            this.length = length;
            this.readInto = readInto;
            this.extents = extents;
            this.context = null;
            this.statuses = null;
        }

        /** A BLOCK_STATUS whose descriptors for meta context (a full name the handshake selected) go to statuses. */
        public Request(String context, long offset, long length, List<BlockStatus> statuses) {
            this.command = CMD_BLOCK_STATUS;
            this.offset = offset;
            this.length = length;
            this.readInto = null;
            this.extents = null;
            this.context = context;
            this.statuses = statuses;
        }

        String describe() {
            return "NBD " + commandName(command) + " at " + offset + " (+" + length + ")";
        }

        void filled(long at, long size) {
            if (filledCount == filled.length) filled = Arrays.copyOf(filled, filled.length * 2);
            filled[filledCount++] = at;
            filled[filledCount++] = at + size;
        }

        /**
         * Null when the chunks filled the whole request exactly once, else what is wrong: a server whose chunks
         * leave a gap would otherwise hand the caller whatever its buffer held there as data.
         */
        String coverageProblem() {
            int ranges = filledCount / 2;
            Integer[] order = new Integer[ranges];
            for (int i = 0; i < ranges; i++) order[i] = i;
            Arrays.sort(order, Comparator.comparingLong(i -> filled[2 * i]));
            long next = 0;
            for (int i : order) {
                long start = filled[2 * i];
                if (start > next) return "nothing for +" + next + " (+" + (start - next) + ")";
                if (start < next) return "chunks overlap at +" + start;
                next = filled[2 * i + 1];
            }
            return next < length ? "nothing for +" + next + " (+" + (length - next) + ")" : null;
        }
    }

    /**
     * Sets the meta contexts this connection's handshake selected, before any BLOCK_STATUS: with more than one, each
     * BLOCK_STATUS reply has a chunk per context, and a request keeps only those of the context it asked about.
     */
    void metaContexts(java.util.Map<String, Integer> selected) {
        replies.metaContexts(selected);
    }

    /** A connection on socket, through tls (which runs over socket) when it is not null. */
    public ClientConnection(SocketChannel socket, TlsChannel tls, ExportInfo info, String server, int index) {
        this.socket = socket;
        this.channel = tls != null ? tls : socket;
        this.out = tls != null ? tls : socket;
        this.extended = info.extendedHeaders();
        this.server = server;
        this.replies = new ReplyReader(channel, info, inFlight, server);
        this.reader = new Thread(this::readReplies, "pagewise-nbd-client-" + index);
        reader.setDaemon(true);
        reader.start();
    }

    /** Sends a request; the future completes when its reply has been read (and, for READ, stored). */
    public CompletableFuture<Void> submit(Request request, int flags, ByteBuffer payload) {
        long cookie = cookies.incrementAndGet();
        if (closing) {
            request.done.completeExceptionally(new ClosedWithMessage("NBD client for " + server + " is closed"));
            return request.done;
        }
        IOException failure = broken;
        if (failure != null) return failed(request, failure);
        if (Thread.currentThread().isInterrupted()) {
            // A send from an interrupted thread would close the socket (NIO does) under every other request.
            request.done.completeExceptionally(new InterruptedIOException(request.describe() + " to " + server
                    + " not sent: the thread is interrupted"));
            return request.done;
        }
        inFlight.put(cookie, request);
        sendLock.lock();
        try {
            putHeader(payload != null && extended ? flags | CMD_FLAG_PAYLOAD_LEN : flags, request.command, cookie,
                    request.offset, request.length);
            if (payload == null) {
                SocketIo.writeFully(channel, requestHeader);
            } else {
                SocketIo.writeFully(out, new ByteBuffer[] {requestHeader, payload}, 2);
            }
        } catch (ClosedByInterruptException e) {
            inFlight.remove(cookie);
            IOException interrupted = new InterruptedIOException("a thread sending to the NBD server was interrupted,"
                    + " which closed the connection");
            fail(interrupted);
            return failed(request, interrupted);
        } catch (IOException e) {
            inFlight.remove(cookie);
            return failed(request, broken != null ? broken : e);
        } finally {
            sendLock.unlock();
        }
        // The reader may have failed everything just before this request was registered.
        if (broken != null && inFlight.remove(cookie) != null) return failed(request, broken);
        return request.done;
    }

    /** Fills requestHeader with a compact or an extended request header; the caller holds the send lock. */
    private void putHeader(int flags, int command, long cookie, long offset, long length) {
        requestHeader.clear();
        requestHeader.putInt(extended ? EXTENDED_REQUEST_MAGIC : REQUEST_MAGIC).putShort((short) flags)
                .putShort((short) command).putLong(cookie).putLong(offset);
        if (extended) {
            requestHeader.putLong(length);
        } else {
            requestHeader.putInt((int) length);
        }
        requestHeader.flip();
    }

    private CompletableFuture<Void> failed(Request request, IOException cause) {
        String why = cause.getMessage() != null ? cause.getMessage() : cause.toString();
        IOException failure = cause instanceof InterruptedIOException
                ? new InterruptedIOException(request.describe() + " to " + server + " failed: " + why)
                : new IOException(request.describe() + " to " + server + " failed: " + why);
        failure.initCause(cause);
        request.done.completeExceptionally(failure);
        return request.done;
    }

    private void readReplies() {
        try {
            replies.readAll();
        } catch (IOException | RuntimeException e) {
            IOException cause = e instanceof IOException ? (IOException) e : new IOException(e.toString(), e);
            if (closing && inFlight.isEmpty()) cause = new IOException("connection closed");
            fail(cause);
        }
    }

    private void fail(IOException cause) {
        broken = cause;
        for (Long cookie : List.copyOf(inFlight.keySet())) {
            Request request = inFlight.remove(cookie);
            if (request != null) {
                failed(request, new IOException("connection lost ("
                        + (cause.getMessage() != null ? cause.getMessage() : cause.toString()) + ")", cause));
            }
        }
        try {
            channel.close();
        } catch (IOException ignored) {
            // already failing
        }
    }

    /** Waits for a send under way to finish, at most until the watchdog closes the socket under it. */
    private boolean tryLockSend() {
        try {
            return sendLock.tryLock(CLOSE_GRACE_MILLIS, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** Sends DISC when the connection is healthy, then closes it and waits for the reader. */
    public void close() throws IOException {
        closing = true;
        // A server that stopped reading would block the goodbye (or TLS's close_notify) for ever: after
        // CLOSE_GRACE_MILLIS the socket is closed under it, which also fails a send stuck there.
        Thread watchdog = new Thread(() -> {
            try {
                Thread.sleep(CLOSE_GRACE_MILLIS);
                socket.close();
            } catch (InterruptedException | IOException done) {
                // closed in time, or already closed
            }
        }, "pagewise-nbd-client-close");
        watchdog.setDaemon(true);
        watchdog.start();
        try {
            if (broken == null && tryLockSend()) {
                try {
                    putHeader(0, CMD_DISC, cookies.incrementAndGet(), 0, 0);
                    SocketIo.writeFully(channel, requestHeader);
                } catch (IOException e) {
                    // the server hung up first, or the watchdog closed the socket: nothing left to say
                } finally {
                    sendLock.unlock();
                }
            }
            channel.close();
        } finally {
            watchdog.interrupt();
            socket.close();
        }
        try {
            reader.join(5000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}

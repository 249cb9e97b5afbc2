package io.pagewise.nbd.client;

import static io.pagewise.nbd.wire.Protocol.*;

import io.pagewise.nbd.NbdException;
import io.pagewise.nbd.client.ClientConnection.Request;
import io.pagewise.nbd.wire.SocketIo;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ByteChannel;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * The reply side of a {@link ClientConnection}, run by its reader thread: reads simple replies, structured chunks or
 * extended ones, matches each to the request in flight its cookie names, fills that request's buffer or lists, and
 * completes its future when the last chunk says so. Anything the server gets wrong is thrown, which fails the
 * connection.
 */
final class ReplyReader {
    private static final ByteBuffer ZEROES = ByteBuffer.allocateDirect(64 * 1024).asReadOnlyBuffer();

    private final ByteChannel channel;
    private final ExportInfo info;
    private final boolean extended;
    private final Map<Long, Request> inFlight;
    private final String server;
    /** The meta contexts the handshake selected, by name, with their ids on this connection. */
    private volatile Map<String, Integer> contexts = Map.of();

    ReplyReader(ByteChannel channel, ExportInfo info, Map<Long, Request> inFlight, String server) {
        this.channel = channel;
        this.info = info;
        this.extended = info.extendedHeaders();
        this.inFlight = inFlight;
        this.server = server;
    }

    /** Sets the meta contexts the handshake selected, before any BLOCK_STATUS, as ClientConnection's metaContexts. */
    void metaContexts(Map<String, Integer> selected) {
        this.contexts = Map.copyOf(selected);
    }

    /** The context id whose chunks a BLOCK_STATUS request keeps: -1 for any when only base:allocation is selected. */
    private long wantedContext(Request request) {
        if (request.context == null && contexts.size() <= 1) return -1;
        Integer id = contexts.get(request.context != null ? request.context : BASE_ALLOCATION);
        return id == null ? -2 : Integer.toUnsignedLong(id);
    }

    /** Reads replies until the connection ends or the server sends something wrong; either is thrown. */
    void readAll() throws IOException {
        ByteBuffer header = ByteBuffer.allocateDirect(EXTENDED_HEADER_SIZE);
        ByteBuffer scratch = ByteBuffer.allocateDirect(64 * 1024);
        while (true) {
            header.clear().limit(4);
            if (!SocketIo.readFully(channel, header)) throw new EOFException("server closed the connection");
            int magic = header.getInt(0);
            if (extended != (magic == EXTENDED_REPLY_MAGIC)) {
                throw new IOException("bad reply magic 0x" + Integer.toHexString(magic) + " (extended headers are "
                        + (extended ? "" : "not ") + "in use)");
            }
            if (extended) {
                header.limit(EXTENDED_HEADER_SIZE);
                SocketIo.readExactly(channel, header);
                chunk(header.getShort(4) & 0xffff, header.getShort(6) & 0xffff, header.getLong(8),
                        header.getLong(24), scratch);
            } else if (magic == SIMPLE_REPLY_MAGIC) {
                header.limit(SIMPLE_REPLY_HEADER_SIZE);
                SocketIo.readExactly(channel, header);
                simpleReply(header.getInt(4), header.getLong(8));
            } else if (magic == STRUCTURED_REPLY_MAGIC) {
                header.limit(CHUNK_HEADER_SIZE);
                SocketIo.readExactly(channel, header);
                chunk(header.getShort(4) & 0xffff, header.getShort(6) & 0xffff, header.getLong(8),
                        Integer.toUnsignedLong(header.getInt(16)), scratch);
            } else {
                throw new IOException("bad reply magic 0x" + Integer.toHexString(magic));
            }
        }
    }

    private Request lookUp(long cookie) throws IOException {
        Request request = inFlight.get(cookie);
        if (request == null) throw new IOException("reply to unknown cookie " + cookie);
        return request;
    }

    private void simpleReply(int error, long cookie) throws IOException {
        Request request = lookUp(cookie);
        if (error == 0 && request.command == CMD_READ) {
            if (info.structuredReplies()) throw new IOException("simple reply with data to a structured " + request.describe());
            SocketIo.readExactly(channel, request.readInto.duplicate());
        }
        inFlight.remove(cookie);
        finish(request, error == 0 ? null : nbdError(request, error, ""));
    }

    private void chunk(int flags, int type, long cookie, long length, ByteBuffer scratch) throws IOException {
        Request request = lookUp(cookie);
        if (length < 0) throw new IOException("reply chunk of " + Long.toUnsignedString(length) + " bytes");
        switch (type) {
            case REPLY_TYPE_NONE:
                if (length != 0) throw new IOException("NONE chunk with " + length + " bytes");
                break;
            case REPLY_TYPE_OFFSET_DATA: {
                long at = readLong(scratch, 8) - request.offset;
                long size = length - 8;
                checkWithin(request, at, size);
                ByteBuffer target = request.readInto.duplicate();
                target.position(target.position() + (int) at).limit(target.position() + (int) size);
                SocketIo.readExactly(channel, target);
                request.filled(at, size);
                break;
            }
            case REPLY_TYPE_OFFSET_HOLE: {
                if (length != 12) throw new IOException("OFFSET_HOLE chunk of " + length + " bytes");
                scratch.clear().limit(12);
                SocketIo.readExactly(channel, scratch);
                long at = scratch.getLong(0) - request.offset;
                long size = Integer.toUnsignedLong(scratch.getInt(8));
                checkWithin(request, at, size);
                ByteBuffer target = request.readInto.duplicate();
                target.position(target.position() + (int) at).limit(target.position() + (int) size);
                while (target.hasRemaining()) {
                    target.put(ZEROES.duplicate().limit(Math.min(ZEROES.capacity(), target.remaining())));
                }
                request.filled(at, size);
                break;
            }
            case REPLY_TYPE_BLOCK_STATUS:
            case REPLY_TYPE_BLOCK_STATUS_EXT:
                if (type == REPLY_TYPE_BLOCK_STATUS_EXT && !extended) throw new IOException("BLOCK_STATUS_EXT chunk "
                        + "without extended headers");
                StatusChunks.read(channel, request, length, type == REPLY_TYPE_BLOCK_STATUS_EXT, scratch,
                        wantedContext(request));
                break;
            default:
                if ((type & 0x8000) != 0) {
                    if (length < 6 || length > 1 << 20) throw new IOException("error chunk of " + length + " bytes");
                    ByteBuffer body = ByteBuffer.allocate((int) length);
                    SocketIo.readExactly(channel, body);
                    int error = body.getInt(0);
                    int messageLength = Math.min(body.getShort(4) & 0xffff, (int) length - 6);
                    String message = new String(body.array(), 6, messageLength, StandardCharsets.UTF_8);
                    if (request.error == null) request.error = nbdError(request, error, message);
                } else {
                    SocketIo.skip(channel, length, scratch);
                }
        }
        if ((flags & REPLY_FLAG_DONE) != 0) {
            if (request.command == CMD_READ && request.error == null) {
                String problem = request.coverageProblem();
                if (problem != null) {
                    throw new IOException("the reply to " + request.describe() + " is incomplete: " + problem);
                }
            }
            inFlight.remove(cookie);
            finish(request, request.error);
        }
    }

    private long readLong(ByteBuffer scratch, int bytes) throws IOException {
        scratch.clear().limit(bytes);
        SocketIo.readExactly(channel, scratch);
        return bytes == 8 ? scratch.getLong(0) : Integer.toUnsignedLong(scratch.getInt(0));
    }

    private static void checkWithin(Request request, long at, long size) throws IOException {
        // size > length - at, not at + size > length: a hostile offset near Long.MAX_VALUE would overflow the sum.
        if (request.readInto == null || at < 0 || size < 0 || size > request.length - at) {
            throw new IOException("reply chunk at +" + at + " (+" + size + ") lies outside " + request.describe());
        }
    }

    private NbdException nbdError(Request request, int error, String message) {
        return new NbdException(commandName(request.command), request.offset, request.length, error, message, server);
    }

    private static void finish(Request request, NbdException error) {
        if (error == null) {
            request.done.complete(null);
        } else {
            request.done.completeExceptionally(error);
        }
    }
}

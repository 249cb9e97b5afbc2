package io.pagewise.nbd.server.protocol;

import static io.pagewise.nbd.wire.Protocol.*;

import io.pagewise.nbd.wire.SocketIo;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ByteChannel;
import java.nio.charset.StandardCharsets;

/**
 * The handshake's side of the connection: the socket, or the TLS channel over it once STARTTLS succeeded. Reads one
 * option at a time into a buffer that grows with the longest, and writes the option replies.
 */
final class OptionChannel {
    /** Oversized options up to this length are read and dropped; longer ones close the connection. */
    static final long MAX_DISCARDED_OPTION_LENGTH = 16L << 20;

    private ByteChannel channel;
    private final ByteBuffer header = ByteBuffer.allocate(16);
    /** Grown to the longest option received, up to MAX_OPTION_LENGTH: a silent client costs no 64 KiB buffer. */
    private ByteBuffer option = ByteBuffer.allocate(1024);
    private int code;

    OptionChannel(ByteChannel channel) {
        this.channel = channel;
    }

    /** Goes on over this channel (the TLS channel once STARTTLS succeeded). */
    void switchTo(ByteChannel channel) {
        this.channel = channel;
    }

    void write(ByteBuffer data) throws IOException {
        SocketIo.writeFully(channel, data);
    }

    /** {@return false at end of stream, else true with data full} */
    boolean read(ByteBuffer data) throws IOException {
        return SocketIo.readFully(channel, data);
    }

    /**
     * Reads the next option, whose code and data are then {@link #code()} and {@link #data()}; one over
     * MAX_OPTION_LENGTH is dropped with TOO_BIG, and the one after it read.
     *
     * @return false at end of stream
     */
    boolean next() throws IOException {
        while (true) {
            header.clear();
            if (!SocketIo.readFully(channel, header)) return false;
            header.flip();
            long magic = header.getLong();
            if (magic != IHAVEOPT) throw new ProtocolViolation("bad option magic 0x" + Long.toHexString(magic));
            code = header.getInt();
            long length = Integer.toUnsignedLong(header.getInt());
            if (length > MAX_OPTION_LENGTH) {
                if (length > MAX_DISCARDED_OPTION_LENGTH) {
                    throw new ProtocolViolation("option " + optionName(code) + " claims " + length + " bytes of data");
                }
                SocketIo.skip(channel, length, option);
                replyError(code, REP_ERR_TOO_BIG, "option data of " + length + " bytes is over the limit of "
                        + MAX_OPTION_LENGTH);
                continue;
            }
            if (length > option.capacity()) option = ByteBuffer.allocate((int) length);
            option.clear().limit((int) length);
            SocketIo.readExactly(channel, option);
            option.flip();
            return true;
        }
    }

    /** {@return the option read last} */
    int code() { return code; }

    /** {@return the data of the option read last, from what has not been taken yet} */
    ByteBuffer data() { return option; }

    /** Reads a string of the option data; its length was checked against the data, which is at most 64 KiB. */
    String string(int length) {
        byte[] bytes = new byte[length];
        option.get(bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    /** Answers the option with INVALID; null, for the callers that return no session. */
    Session invalid(int code, String message) throws IOException {
        replyError(code, REP_ERR_INVALID, message);
        return null;
    }

    void replyError(int code, int type, String message) throws IOException {
        // Messages echo what the client sent; libnbd drops a connection whose error string is over the limit.
        reply(code, type, ByteBuffer.wrap(utf8Within(message, MAX_STRING)));
    }

    void reply(int code, int type, ByteBuffer data) throws IOException {
        int length = data == null ? 0 : data.remaining();
        // One write for header and data: one TLS record, one TCP segment.
        ByteBuffer reply = ByteBuffer.allocate(20 + length).putLong(OPTION_REPLY_MAGIC).putInt(code).putInt(type).putInt(length);
        if (data != null) reply.put(data);
        SocketIo.writeFully(channel, reply.flip());
    }

    static byte[] utf8(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}

package io.pagewise.nbd;

import static io.pagewise.nbd.wire.Protocol.*;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.CacheMode;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * NBD_OPT_EXTENDED_HEADERS on raw sockets, one rule of the spec after another: how it is negotiated against structured
 * replies and EXPORT_NAME, the 32-byte requests and reply chunks (the reply repeats the request's offset), 64-bit
 * lengths for WRITE_ZEROES and BLOCK_STATUS, BLOCK_STATUS_EXT, and what a payload on a command that takes none gets.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ExtendedHeadersTest {
    /** Larger than 4 GiB, so that one request and one descriptor can cover more than 32 bits. */
    private static final long SIZE = 8L << 30;

    @TempDir
    Path dir;
    private TestServer server;

    @AfterEach
    void stop() throws IOException {
        if (server != null) server.close();
    }

    /** A raw client speaking extended headers once it has negotiated them. */
    private final class Client implements AutoCloseable {
        final SocketChannel channel;

        Client() throws IOException {
            server = server != null ? server : TestServer.start(dir, SIZE, CacheMode.WRITEBACK);
            channel = server.connect();
            read(18);
            write(ByteBuffer.allocate(4).putInt(CLIENT_FIXED_NEWSTYLE | CLIENT_NO_ZEROES).flip());
        }

        void option(int code, byte[] data) throws IOException {
            write(ByteBuffer.allocate(16 + data.length).putLong(IHAVEOPT).putInt(code).putInt(data.length).put(data).flip());
        }

        /** Reads one option reply to code; returns its type, and its data in data when that is not null. */
        int optionReply(int code, ByteBuffer[] data) throws IOException {
            ByteBuffer head = read(20);
            assertEquals(OPTION_REPLY_MAGIC, head.getLong());
            assertEquals(code, head.getInt());
            int type = head.getInt();
            ByteBuffer body = read(head.getInt());
            if (data != null) data[0] = body;
            return type;
        }

        int simpleOption(int code) throws IOException {
            option(code, new byte[0]);
            return optionReply(code, null);
        }

        /** SET_META_CONTEXT base:allocation for "", then GO: the transmission flags. */
        int enter() throws IOException {
            byte[] query = BASE_ALLOCATION.getBytes(StandardCharsets.US_ASCII);
            option(OPT_SET_META_CONTEXT, ByteBuffer.allocate(12 + query.length).putInt(0).putInt(1).putInt(query.length)
                    .put(query).array());
            assertEquals(REP_META_CONTEXT, optionReply(OPT_SET_META_CONTEXT, null));
            assertEquals(REP_ACK, optionReply(OPT_SET_META_CONTEXT, null));
            option(OPT_GO, new byte[6]);
            int flags = -1;
            ByteBuffer[] data = new ByteBuffer[1];
            for (int type; (type = optionReply(OPT_GO, data)) != REP_ACK; ) {
                assertEquals(REP_INFO, type);
                if (data[0].getShort(0) == INFO_EXPORT) flags = data[0].getShort(10) & 0xffff;
            }
            return flags;
        }

        Client transmitting() throws IOException {
            assertEquals(REP_ACK, simpleOption(OPT_EXTENDED_HEADERS));
            enter();
            return this;
        }

        void request(int flags, int type, long cookie, long offset, long length) throws IOException {
            write(ByteBuffer.allocate(EXTENDED_HEADER_SIZE).putInt(EXTENDED_REQUEST_MAGIC).putShort((short) flags)
                    .putShort((short) type).putLong(cookie).putLong(offset).putLong(length).flip());
        }

        /** Reads one extended reply chunk for cookie and offset; returns its payload, with type and flags first. */
        ByteBuffer chunk(long cookie, long offset) throws IOException {
            ByteBuffer head = read(EXTENDED_HEADER_SIZE);
            assertEquals(EXTENDED_REPLY_MAGIC, head.getInt(), "extended reply magic");
            int flags = head.getShort() & 0xffff;
            int type = head.getShort() & 0xffff;
            assertEquals(cookie, head.getLong(), "cookie");
            assertEquals(offset, head.getLong(), "the request's offset, repeated");
            long length = head.getLong();
            assertTrue(length >= 0 && length < 1 << 20, "chunk length " + length);
            return ByteBuffer.allocate(4 + (int) length).putShort((short) flags).putShort((short) type)
                    .put(read((int) length)).flip();
        }

        /** Reads a one-chunk reply; returns its error, 0 for a NONE chunk. */
        int status(long cookie, long offset) throws IOException {
            ByteBuffer chunk = chunk(cookie, offset);
            assertEquals(REPLY_FLAG_DONE, chunk.getShort());
            int type = chunk.getShort() & 0xffff;
            if (type == REPLY_TYPE_NONE) return 0;
            assertEquals(REPLY_TYPE_ERROR, type);
            return chunk.getInt();
        }

        ByteBuffer read(int n) throws IOException {
            ByteBuffer buffer = ByteBuffer.allocate(n);
            while (buffer.hasRemaining()) {
                if (channel.read(buffer) < 0) throw new EOFException("server closed after " + buffer.position() + " of " + n);
            }
            return buffer.flip();
        }

        void write(ByteBuffer buffer) throws IOException {
            while (buffer.hasRemaining()) channel.write(buffer);
        }

        boolean closedByServer() {
            try {
                return channel.read(ByteBuffer.allocate(1)) < 0;
            } catch (IOException e) {
                return true;
            }
        }

        @Override
        public void close() throws IOException {
            channel.close();
        }
    }

    @Test
    void extendedHeadersTakePrecedenceOverStructuredRepliesAndRuleOutExportName() throws Exception {
        try (Client client = new Client()) {
            client.option(OPT_EXTENDED_HEADERS, new byte[] {1});
            assertEquals(REP_ERR_INVALID, client.optionReply(OPT_EXTENDED_HEADERS, null), "the option takes no data");
            assertEquals(REP_ACK, client.simpleOption(OPT_STRUCTURED_REPLY));
            assertEquals(REP_ACK, client.simpleOption(OPT_EXTENDED_HEADERS), "after structured replies too");
            assertEquals(REP_ERR_EXT_HEADER_REQD, client.simpleOption(OPT_STRUCTURED_REPLY), "no way back");
            client.option(OPT_EXPORT_NAME, new byte[0]);
            assertTrue(client.closedByServer(), "EXPORT_NAME after EXTENDED_HEADERS ends the session");
        }
    }

    /** An option the server does not take is refused by name, or by number when the spec gives it none. */
    @Test
    void refusalsNameTheOption() throws Exception {
        try (Client client = new Client()) {
            ByteBuffer[] message = new ByteBuffer[1];
            client.option(OPT_PEEK_EXPORT, new byte[0]);
            assertEquals(REP_ERR_UNSUP, client.optionReply(OPT_PEEK_EXPORT, message));
            assertEquals("option PEEK_EXPORT is not supported", StandardCharsets.UTF_8.decode(message[0]).toString());
            client.option(12, new byte[0]);
            assertEquals(REP_ERR_UNSUP, client.optionReply(12, message));
            assertEquals("option OPT_12 is not supported", StandardCharsets.UTF_8.decode(message[0]).toString());
        }
    }

    @Test
    void extendedHeadersAloneAllowMetaContextsAndDf() throws Exception {
        try (Client client = new Client()) {
            assertEquals(REP_ACK, client.simpleOption(OPT_EXTENDED_HEADERS));
            int flags = client.enter();                 // SET_META_CONTEXT without STRUCTURED_REPLY
            assertTrue((flags & TF_SEND_DF) != 0, "DF is offered with extended headers: 0x" + Integer.toHexString(flags));
            client.request(0, CMD_FLUSH, 5, 0, 0);
            assertEquals(0, client.status(5, 0), "a reply without payload is an extended chunk too");
        }
    }

    @Test
    void writeWithOrWithoutPayloadLenAndReadBackInChunks() throws Exception {
        try (Client client = new Client().transmitting()) {
            long at = (5L << 30) + 512;
            client.request(CMD_FLAG_PAYLOAD_LEN, CMD_WRITE, 1, at, 3);   // as libnbd sends it
            client.write(ByteBuffer.wrap(new byte[] {1, 2, 3}));
            assertEquals(0, client.status(1, at));
            client.request(0, CMD_WRITE, 2, at + 3, 2);                  // as qemu 10 sends it
            client.write(ByteBuffer.wrap(new byte[] {4, 5}));
            assertEquals(0, client.status(2, at + 3));
            client.request(CMD_FLAG_DF, CMD_READ, 3, at, 5);
            ByteBuffer data = client.chunk(3, at);
            assertEquals(REPLY_FLAG_DONE, data.getShort());
            assertEquals(REPLY_TYPE_OFFSET_DATA, data.getShort());
            assertEquals(at, data.getLong());
            byte[] read = new byte[5];
            data.get(read);
            assertArrayEquals(new byte[] {1, 2, 3, 4, 5}, read);
        }
    }

    @Test
    void oneWriteZeroesAndOneBlockStatusCoverMoreThanFourGib() throws Exception {
        try (Client client = new Client().transmitting()) {
            client.request(CMD_FLAG_PAYLOAD_LEN, CMD_WRITE, 1, 7L << 30, 1);
            client.write(ByteBuffer.wrap(new byte[] {9}));
            assertEquals(0, client.status(1, 7L << 30));
            client.request(0, CMD_WRITE_ZEROES, 2, 0, 6L << 30);          // 6 GiB, punched: MAY_TRIM
            assertEquals(0, client.status(2, 0));
            client.request(0, CMD_BLOCK_STATUS, 3, 0, SIZE);
            ByteBuffer status = client.chunk(3, 0);
            assertEquals(REPLY_FLAG_DONE, status.getShort());
            assertEquals(REPLY_TYPE_BLOCK_STATUS_EXT, status.getShort());
            assertEquals(BASE_ALLOCATION_ID, status.getInt());
            int count = status.getInt();
            assertEquals(count * 16, status.remaining(), "the descriptor count matches the length");
            assertEquals(0, status.getInt(20), "padding");
            long first = status.getLong();
            status.getInt();
            assertEquals(STATE_HOLE | STATE_ZERO, status.getInt());
            assertTrue(first >= 6L << 30 && first <= 7L << 30, "one hole descriptor longer than 2^32: " + first);
        }
    }

    @Test
    void aPayloadOnACommandThatTakesNoneIsReadAndRefused() throws Exception {
        try (Client client = new Client().transmitting()) {
            client.request(CMD_FLAG_PAYLOAD_LEN, CMD_READ, 1, 0, 16);
            client.write(ByteBuffer.allocate(16).putLong(0, 0x25609513_25609513L));
            assertEquals(22, client.status(1, 0));
            client.request(0, CMD_TRIM, 2, 0, 1L << 63);                  // a length of 2^63: no overflow
            assertEquals(22, client.status(2, 0));
            client.request(0, CMD_READ, 3, 0, MAX_PAYLOAD + 1L);           // READ stays within the maximum payload
            assertEquals(22, client.status(3, 0));
            client.request(0, CMD_FLUSH, 4, 0, 0);
            assertEquals(0, client.status(4, 0), "the connection stayed in step");
        }
    }

    @Test
    void aPayloadOverTheMaximumOrACompactRequestEndsTheConnection() throws Exception {
        try (Client client = new Client().transmitting()) {
            client.request(CMD_FLAG_PAYLOAD_LEN, CMD_BLOCK_STATUS, 1, 0, 1L << 40);
            assertTrue(client.closedByServer(), "a terabyte of payload is not read");
        }
        try (Client client = new Client().transmitting()) {
            // A compact FLUSH, and the start of the next request: 32 bytes, which the server reads as one header.
            client.write(ByteBuffer.allocate(EXTENDED_HEADER_SIZE).putInt(REQUEST_MAGIC).putShort((short) 0)
                    .putShort((short) CMD_FLUSH).putLong(1).putLong(0).putInt(0).putInt(REQUEST_MAGIC).flip());
            assertTrue(client.closedByServer(), "a compact request after extended headers");
        }
        // Both counted; logged at most once a second, so the second may be held back.
        assertEquals(2, server.server.stats().protocolErrors());
        assertTrue(server.log.messages(System.Logger.Level.WARNING, "dropped").size() >= 1,
                String.valueOf(server.log.messages(System.Logger.Level.WARNING, "")));
    }
}

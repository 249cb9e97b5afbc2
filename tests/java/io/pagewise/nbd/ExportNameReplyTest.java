package io.pagewise.nbd;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.pagewise.CacheMode;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * NBD_OPT_EXPORT_NAME's reply, byte for byte, on a raw socket (libnbd never sends EXPORT_NAME to a server that
 * knows GO): size, transmission flags, then 124 zero bytes unless the client said NO_ZEROES.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class ExportNameReplyTest {
    // Wire values from the NBD spec (doc/proto.md), not from the server's Protocol class.
    private static final long IHAVEOPT = 0x49484156454F5054L;
    private static final int REQUEST_MAGIC = 0x25609513;
    private static final int SIMPLE_REPLY_MAGIC = 0x67446698;
    private static final int FIXED_NEWSTYLE = 1;
    private static final int NO_ZEROES = 2;
    private static final int OPT_EXPORT_NAME = 1;
    private static final int CMD_READ = 0;
    private static final int CMD_DISC = 2;
    /**
     * What a writable file export advertises without structured replies: HAS_FLAGS, SEND_FLUSH, SEND_FUA, SEND_TRIM,
     * SEND_WRITE_ZEROES, CAN_MULTI_CONN, SEND_CACHE, SEND_FAST_ZERO; not SEND_DF (bit 7), which the spec allows only
     * once structured replies are negotiated, and EXPORT_NAME comes with none.
     */
    private static final int FILE_EXPORT_FLAGS = 1 | 1 << 2 | 1 << 3 | 1 << 5 | 1 << 6 | 1 << 8 | 1 << 10 | 1 << 11;
    private static final int SIZE = 1 << 20;
    private static final byte[] DATA = "abcd".getBytes(StandardCharsets.US_ASCII);

    @TempDir
    Path dir;

    /**
     * Greets with clientFlags, sends EXPORT_NAME "", then at once a 4-byte READ at 0 and DISC, and returns every
     * byte the server sent after its greeting, up to the close that follows DISC.
     */
    private byte[] exportNameThenReadAndDisconnect(int clientFlags) throws IOException {
        try (TestServer server = TestServer.start(dir, SIZE, CacheMode.WRITEBACK)) {
            try (RandomAccessFile raf = new RandomAccessFile(server.file.toFile(), "rw")) {
                raf.write(DATA);
            }
            try (SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX)) {
                channel.connect(UnixDomainSocketAddress.of(((UnixDomainSocketAddress) server.server.address()).getPath()));
                ByteBuffer greeting = ByteBuffer.allocate(18);
                while (greeting.hasRemaining()) {
                    if (channel.read(greeting) < 0) throw new IOException("closed during the greeting");
                }
                assertEquals(FIXED_NEWSTYLE | NO_ZEROES, greeting.getShort(16), "handshake flags");
                ByteBuffer out = ByteBuffer.allocate(4 + 16 + 28 + 28);
                out.putInt(clientFlags);
                out.putLong(IHAVEOPT).putInt(OPT_EXPORT_NAME).putInt(0);
                out.putInt(REQUEST_MAGIC).putShort((short) 0).putShort((short) CMD_READ).putLong(42).putLong(0).putInt(DATA.length);
                out.putInt(REQUEST_MAGIC).putShort((short) 0).putShort((short) CMD_DISC).putLong(43).putLong(0).putInt(0);
                out.flip();
                while (out.hasRemaining()) channel.write(out);
                ByteArrayOutputStream received = new ByteArrayOutputStream();
                ByteBuffer buffer = ByteBuffer.allocate(4096);
                while (channel.read(buffer.clear()) >= 0) received.write(buffer.array(), 0, buffer.position());
                return received.toByteArray();
            }
        }
    }

    /** Checks the simple READ reply and its data at the start of rest, and that nothing follows. */
    private static void assertReadReplyIsAllThatFollows(ByteBuffer rest) {
        assertEquals(16 + DATA.length, rest.remaining(), "bytes after the EXPORT_NAME reply");
        assertEquals(SIMPLE_REPLY_MAGIC, rest.getInt());
        assertEquals(0, rest.getInt(), "error");
        assertEquals(42, rest.getLong(), "cookie");
        byte[] data = new byte[DATA.length];
        rest.get(data);
        assertArrayEquals(DATA, data);
    }

    @Test
    void withoutNoZeroesTheReplyIs134BytesEndingIn124Zeros() throws Exception {
        ByteBuffer received = ByteBuffer.wrap(exportNameThenReadAndDisconnect(FIXED_NEWSTYLE));
        assertEquals(134 + 16 + DATA.length, received.remaining(), "bytes received: EXPORT_NAME reply, READ reply");
        assertEquals(SIZE, received.getLong(), "export size");
        assertEquals(FILE_EXPORT_FLAGS, received.getShort() & 0xffff, "transmission flags");
        byte[] padding = new byte[124];
        received.get(padding);
        assertArrayEquals(new byte[124], padding, "the 124 reserved bytes");
        assertReadReplyIsAllThatFollows(received.slice());
    }

    @Test
    void withNoZeroesTheReplyIs10Bytes() throws Exception {
        ByteBuffer received = ByteBuffer.wrap(exportNameThenReadAndDisconnect(FIXED_NEWSTYLE | NO_ZEROES));
        assertEquals(10 + 16 + DATA.length, received.remaining(), "bytes received: EXPORT_NAME reply, READ reply");
        assertEquals(SIZE, received.getLong(), "export size");
        assertEquals(FILE_EXPORT_FLAGS, received.getShort() & 0xffff, "transmission flags");
        assertReadReplyIsAllThatFollows(received.slice());
    }
}

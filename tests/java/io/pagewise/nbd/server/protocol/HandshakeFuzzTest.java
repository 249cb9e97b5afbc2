package io.pagewise.nbd.server.protocol;

import io.pagewise.testing.FuzzSockets;
import io.pagewise.testing.ScriptedChannel;
import static io.pagewise.nbd.wire.Protocol.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.pagewise.backends.MemoryDevice;
import io.pagewise.filters.ReadOnlyFilter;
import io.pagewise.nbd.server.ExportEntry;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Tag;

/**
 * The server's option haggling fed arbitrary client bytes. Invariants: the handshake ends (the input is finite, and
 * end of stream ends it), it fails only with a {@link ProtocolViolation} or an {@link EOFException}, no read asks
 * for more than {@link io.pagewise.nbd.wire.Protocol#MAX_OPTION_LENGTH} bytes (the one buffer it allocates for
 * option data), and everything it writes is a well-formed greeting followed by well-formed option replies.
 * Seeds and findings: tests/resources/io/pagewise/nbd/server/HandshakeFuzzTestInputs/negotiate/.
 */
@Tag("fuzz")
class HandshakeFuzzTest {
    private static final Map<String, ExportEntry> EXPORTS = new LinkedHashMap<>();

    static {
        EXPORTS.put("", new ExportEntry("", "the default export", new MemoryDevice(1 << 20)));
        EXPORTS.put("ro", new ExportEntry("ro", "", new ReadOnlyFilter(new MemoryDevice(4096))));
    }

    @FuzzTest
    void negotiate(byte[] clientBytes) throws IOException {
        ScriptedChannel channel = new ScriptedChannel(clientBytes, MAX_OPTION_LENGTH);
        Session session = null;
        try {
            session = new Handshake(channel, EXPORTS, MAX_PAYLOAD, () -> false).negotiate();
        } catch (ProtocolViolation | EOFException expected) {
            // the documented ways a handshake fails on a client's bytes
        } catch (IOException e) {
            throw new AssertionError("undocumented failure: " + e, e);
        }
        if (session != null) {
            assertSame(EXPORTS.get(session.entry().name()), session.entry(), "the session names a listed export");
            assertEquals(session.entry().device().size(), session.size());
        }
        checkReplies(channel.written());
    }

    /** The greeting, then option replies, the last of which may be EXPORT_NAME's bare export data. */
    private static void checkReplies(ByteBuffer out) {
        assertEquals(NBDMAGIC, out.getLong());
        assertEquals(IHAVEOPT, out.getLong());
        out.getShort();
        while (out.hasRemaining()) {
            if (out.remaining() == 10 || out.remaining() == 134) {
                // EXPORT_NAME's reply: size, flags and maybe zeroes, and nothing after it
                return;
            }
            assertTrue(out.remaining() >= 20, "a truncated option reply header");
            assertEquals(OPTION_REPLY_MAGIC, out.getLong(), "option reply magic");
            out.getInt();
            out.getInt();
            int length = out.getInt();
            if (length < 0 || length > out.remaining()) fail("an option reply claims " + length + " bytes of data");
            assertTrue(length <= MAX_OPTION_LENGTH, "an option reply of " + length + " bytes");
            out.position(out.position() + length);
        }
    }
}

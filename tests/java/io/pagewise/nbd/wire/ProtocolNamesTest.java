package io.pagewise.nbd.wire;

import static io.pagewise.nbd.wire.Protocol.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Logs and messages name what the spec names: every option, option reply and command, and a number for the rest. */
@Timeout(value = 10, unit = TimeUnit.SECONDS)
class ProtocolNamesTest {
    @Test
    void everyOptionTheSpecDefinesHasItsName() {
        for (int option = OPT_EXPORT_NAME; option <= OPT_EXTENDED_HEADERS; option++) {
            assertFalse(optionName(option).startsWith("OPT_"), "option " + option + ": " + optionName(option));
        }
        assertEquals("EXTENDED_HEADERS", optionName(11));
        assertEquals("PEEK_EXPORT", optionName(4));
        assertEquals("OPT_12", optionName(12));
        assertEquals("OPT_4294967295", optionName(-1));
    }

    @Test
    void everyCommandAndOptionReplyTheSpecDefinesHasItsName() {
        for (int command = CMD_READ; command <= CMD_RESIZE; command++) {
            assertFalse(commandName(command).startsWith("CMD_"), "command " + command + ": " + commandName(command));
        }
        assertEquals("CMD_9", commandName(9));
        int[] replies = {REP_ACK, REP_SERVER, REP_INFO, REP_META_CONTEXT, REP_ERR_UNSUP, REP_ERR_POLICY, REP_ERR_INVALID,
            REP_ERR_PLATFORM, REP_ERR_TLS_REQD, REP_ERR_UNKNOWN, REP_ERR_SHUTDOWN, REP_ERR_BLOCK_SIZE_REQD,
            REP_ERR_TOO_BIG, REP_ERR_EXT_HEADER_REQD};
        for (int reply : replies) assertFalse(replyName(reply).startsWith("REP_"), Integer.toHexString(reply));
        assertEquals("ERR_EXT_HEADER_REQD", replyName(0x8000000a));
        assertEquals("REP_0x8000000b", replyName(0x8000000b));
    }
}

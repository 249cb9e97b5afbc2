package io.pagewise.nbd.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Strings the server sends are cut to the limit on a character boundary, never inside a character. */
@Timeout(value = 10, unit = TimeUnit.SECONDS)
class ProtocolStringsTest {
    @Test
    void aCutFallsBeforeTheCharacterItWouldSplit() {
        assertArrayEquals("abc".getBytes(StandardCharsets.UTF_8), Protocol.utf8Within("abc", 3));
        assertEquals("ab", new String(Protocol.utf8Within("abc", 2), StandardCharsets.UTF_8));
        // "é" is two bytes, "€" three, "😀" four: a limit inside any of them keeps what comes before it.
        assertEquals("a", new String(Protocol.utf8Within("aé", 2), StandardCharsets.UTF_8));
        assertEquals("aé", new String(Protocol.utf8Within("aé", 3), StandardCharsets.UTF_8));
        assertEquals("a", new String(Protocol.utf8Within("a€", 3), StandardCharsets.UTF_8));
        assertEquals("a", new String(Protocol.utf8Within("a\uD83D\uDE00", 4), StandardCharsets.UTF_8));
        assertEquals("a\uD83D\uDE00", new String(Protocol.utf8Within("a\uD83D\uDE00b", 5), StandardCharsets.UTF_8));
        assertEquals(0, Protocol.utf8Within("é", 1).length);
        assertEquals(256, Protocol.utf8Within("x".repeat(1000), 256).length);
    }
}

package io.pagewise.nbd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.pagewise.nbd.NbdUri;
import java.net.InetSocketAddress;
import java.net.UnixDomainSocketAddress;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Tag;

/**
 * NBD URI parsing fed arbitrary text. Invariants: it fails only with the documented IllegalArgumentException (its
 * subclasses included), and what it accepts is an nbd, nbd+tcp or nbd+unix URI with a host and a port in range, or
 * a socket path, and an export name. It must not look the host up (that would be a DNS query per input): the
 * address stays unresolved. Seeds: tests/resources/io/pagewise/nbd/NbdUriFuzzTestInputs/parse/ (one URI per file).
 */
@Tag("fuzz")
class NbdUriFuzzTest {
    @FuzzTest
    void parse(byte[] bytes) {
        String text = new String(bytes, StandardCharsets.UTF_8);
        NbdUri uri;
        try {
            uri = NbdUri.parse(text);
        } catch (IllegalArgumentException expected) {
            assertNotNull(expected.getMessage(), "an error says what was wrong");
            return;
        }
        assertEquals(text, uri.text());
        assertNotNull(uri.exportName());
        assertTrue(NbdUri.looksLikeUri(text) || text.regionMatches(true, 0, "nbd", 0, 3), "accepted " + text);
        if (uri.address() instanceof InetSocketAddress) {
            InetSocketAddress inet = (InetSocketAddress) uri.address();
            assertTrue(inet.isUnresolved(), "parsing resolved " + inet);
            assertTrue(!inet.getHostString().isEmpty() && inet.getPort() >= 0 && inet.getPort() <= 65535, inet.toString());
        } else {
            assertTrue(uri.address() instanceof UnixDomainSocketAddress, "address " + uri.address());
            assertTrue(!((UnixDomainSocketAddress) uri.address()).getPath().toString().isEmpty());
        }
    }
}

package io.pagewise.nbd.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * What the client says of a server's TLS alert: whether it sent a certificate decides, not which alert came (TlsTest
 * drives the same with real handshakes).
 */
class CertificateRefusalTest {
    private static final String NONE = "requires a TLS client certificate, and this client has none to send"
            + " (client-cert.pem and client-key.pem of tls-certificates)";

    private static String received(String alert) {
        return "(" + alert + ") Received fatal alert: " + alert;
    }

    @ParameterizedTest
    @ValueSource(strings = {"certificate_required", "bad_certificate", "handshake_failure", "certificate_unknown",
            "unknown_ca", "access_denied"})
    void anAlertAfterNoCertificateWasSentSaysTheServerWantsOne(String alert) {
        assertEquals(NONE, ClientHandshake.certificateRefusal(received(alert), false, true));
    }

    @ParameterizedTest
    @ValueSource(strings = {"bad_certificate", "certificate_unknown", "unknown_ca", "certificate_expired",
            "access_denied"})
    void anAlertAfterOurCertificateSaysTheServerRefusedIt(String alert) {
        assertEquals("refused this client's TLS certificate (" + alert + "): it does not trust it",
                ClientHandshake.certificateRefusal(received(alert), true, true));
    }

    @Test
    void otherFailuresAreLeftToTheGeneralMessage() {
        // No common cipher suite: the server refused the hello, before any certificate.
        assertNull(ClientHandshake.certificateRefusal(received("handshake_failure"), false, false));
        // The server wants a certificate although ours went out: nothing more to say than the alert.
        assertNull(ClientHandshake.certificateRefusal(received("certificate_required"), true, true));
        assertNull(ClientHandshake.certificateRefusal(received("protocol_version"), false, true));
        assertNull(ClientHandshake.certificateRefusal(received("decrypt_error"), true, true));
        // Our own check of the server's certificate failed: no alert from the server.
        assertNull(ClientHandshake.certificateRefusal("PKIX path building failed", false, true));
    }
}

package io.pagewise.nbd.server.protocol;

import static io.pagewise.nbd.wire.Protocol.*;

import io.pagewise.nbd.TlsMode;
import io.pagewise.nbd.server.access.AccessRefused;
import io.pagewise.nbd.tls.TlsChannel;
import io.pagewise.nbd.tls.TlsSettings;
import java.io.IOException;
import java.nio.channels.ByteChannel;
import javax.net.ssl.SSLException;

/**
 * STARTTLS in the handshake: the TLS handshake over the socket, after which the options go over TLS, and the
 * admission's word on the client TLS identified; a client that may not come in has its options refused, with why.
 */
final class TlsUpgrade {
    /** Options a client refused after TLS gets answers to before the connection ends (libnbd sends four or five). */
    private static final int MAX_REFUSED_AFTER_TLS = 16;

    private final ByteChannel socket;
    private final TlsSettings settings;
    private final Handshake.Admission admission;
    private TlsChannel tls;
    /** Why a client that completed TLS may not come in, or null: its options are refused with that reason. */
    private String refusedAfterTls;
    private int optionsRefusedAfterTls;

    TlsUpgrade(ByteChannel socket, TlsSettings settings, Handshake.Admission admission) {
        this.socket = socket;
        this.settings = settings;
        this.admission = admission;
    }

    /** {@return the TLS channel the connection goes on over, or null when the client did not ask for TLS} */
    TlsChannel tls() {
        return tls;
    }

    /** {@return whether the server answers STARTTLS} */
    boolean offered() {
        return settings.mode() != TlsMode.OFF;
    }

    /** {@return whether TLS is required and not active yet: only STARTTLS and ABORT are answered} */
    boolean stillRequired() {
        return tls == null && settings.mode() == TlsMode.REQUIRE;
    }

    /** {@return whether TLS showed a client that may not come in} */
    boolean refused() {
        return refusedAfterTls != null;
    }

    /**
     * ACKs STARTTLS and runs the TLS handshake; the options go on over TLS.
     *
     * @return false when STARTTLS was answered INVALID instead
     */
    boolean start(OptionChannel options) throws IOException {
        if (tls != null) {
            options.invalid(OPT_STARTTLS, "TLS is already active");
            return false;
        }
        if (options.data().hasRemaining()) {
            options.invalid(OPT_STARTTLS, "STARTTLS takes no data");
            return false;
        }
        options.reply(OPT_STARTTLS, REP_ACK, null);
        try {
            tls = TlsChannel.handshake(socket, settings.serverEngine());
        } catch (SSLException e) {
            throw new ProtocolViolation("TLS handshake failed: " + e.getMessage(), e);
        }
        options.switchTo(tls);
        refusedAfterTls = admission.tlsRefusal(tls.session());
        return true;
    }

    /**
     * Answers an option of a client that TLS showed may not come in with POLICY and why, so that the client can say
     * it (a bare close reads as a network fault); the connection ends at the option that would have chosen an export.
     */
    void refuse(int code, OptionChannel options) throws IOException {
        if (code != OPT_EXPORT_NAME && code != OPT_ABORT && ++optionsRefusedAfterTls <= MAX_REFUSED_AFTER_TLS) {
            options.replyError(code, REP_ERR_POLICY, "this client may not connect: " + refusedAfterTls);
            if (code != OPT_GO && code != OPT_INFO && code != OPT_LIST) return;
        }
        throw new AccessRefused("refused after TLS: " + refusedAfterTls);
    }
}

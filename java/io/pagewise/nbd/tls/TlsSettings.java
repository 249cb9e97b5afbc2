package io.pagewise.nbd.tls;

import io.pagewise.nbd.TlsMode;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;

/** A server's TLS: the context its sessions come from, whether TLS is offered or required, and client checks. */
public record TlsSettings(SSLContext context, TlsMode mode, boolean verifyPeer) {
    /** The settings of a server without TLS. */
    public static final TlsSettings OFF = new TlsSettings(null, TlsMode.OFF, false);

    /** {@return a fresh server-side engine for one connection} */
    public SSLEngine serverEngine() {
        SSLEngine engine = context.createSSLEngine();
        engine.setUseClientMode(false);
        if (verifyPeer) engine.setNeedClientAuth(true);
        return engine;
    }
}

package io.pagewise.nbd.server.protocol;

import java.io.IOException;

/**
 * The client broke the protocol in a way that ends its connection (a bad magic, unknown client flags, an option too
 * long to skip). Unlike an NBD error it carries no error value and never reaches the client: the server drops the
 * connection and counts it in {@link io.pagewise.nbd.server.ServerStats#protocolErrors()}.
 */
public final class ProtocolViolation extends IOException {
    ProtocolViolation(String message) {
        super(message);
    }

    ProtocolViolation(String message, Throwable cause) {
        super(message, cause);
    }
}

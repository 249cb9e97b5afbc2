package io.pagewise.nbd.server.service;

/**
 * Where the connection lifecycle counts what happens to connections. NbdServer passes its
 * {@link io.pagewise.nbd.server.ServerStats}, whose counting methods are not public API.
 */
public interface ConnectionEvents {
    /** A connection was accepted. */
    void connectionAccepted();

    /** A connection that finished its handshake was refused entry to transmission. */
    void connectionRejected();

    /** A client broke the protocol and was dropped. */
    void protocolError();

    /** A connection did not finish its handshake in time. */
    void handshakeTimedOut();

    /** A connection in the handshake was dropped to make room for a new one. */
    void handshakeDropped();

    /** A connection was closed by the idle timeout. */
    void idleTimedOut();

    /** A connection was cut by the reply timeout: a reply went unread. */
    void replyTimedOut();

    /** A client was kept out by the allow-lists (address, user, TLS subject). */
    void accessRefused();

    /** A handshake ended with the client entering transmission. */
    void handshakeCompleted();
}

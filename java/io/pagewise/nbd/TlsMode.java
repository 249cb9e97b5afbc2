package io.pagewise.nbd;

/** Whether a server offers or insists on TLS, with nbdkit's {@code --tls} meanings. */
public enum TlsMode {
    /** No TLS: STARTTLS is answered with NBD_REP_ERR_UNSUP. */
    OFF,
    /** TLS for clients that ask with STARTTLS; others are served in plain text. */
    ON,
    /**
     * TLS only: before STARTTLS every option but ABORT is refused with NBD_REP_ERR_TLS_REQD, and EXPORT_NAME closes
     * the connection, so nothing but the greeting, STARTTLS and its reply cross the wire in clear.
     */
    REQUIRE
}

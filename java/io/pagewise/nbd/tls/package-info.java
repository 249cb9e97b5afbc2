/**
 * TLS in one place, for the server and the client: {@link io.pagewise.nbd.tls.TlsChannel} (a byte channel over an
 * {@code SSLEngine}), the server's {@link io.pagewise.nbd.tls.TlsSettings} and {@link io.pagewise.nbd.tls.ServerTls}
 * (settings and the warm-up of {@link io.pagewise.nbd.tls.TlsWarmup}), and the client's
 * {@link io.pagewise.nbd.tls.AnyServerTrust}. Not exported: the public TLS API is
 * {@link io.pagewise.nbd.TlsCertificates} and {@link io.pagewise.nbd.TlsMode}.
 */
package io.pagewise.nbd.tls;

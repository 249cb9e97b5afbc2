/**
 * The server as a running service: {@link io.pagewise.nbd.server.service.Listener} (the socket and its socket file),
 * {@link io.pagewise.nbd.server.service.Connections} and {@link io.pagewise.nbd.server.service.AdmissionControl}
 * (accept, the limits on handshakes and connections, timeouts, graceful stop) and {@link
 * io.pagewise.nbd.server.service.Connection} (one client's lifecycle, from accept through the protocol to close).
 */
package io.pagewise.nbd.server.service;

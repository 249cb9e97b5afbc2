/**
 * What the NBD (Network Block Device) server and client share: {@link io.pagewise.nbd.NbdUri} (libnbd-style URIs),
 * {@link io.pagewise.nbd.NbdException} (an error reply), {@link io.pagewise.nbd.NbdCommand},
 * {@link io.pagewise.nbd.TlsMode} and {@link io.pagewise.nbd.TlsCertificates} (TLS contexts from an nbdkit-style
 * certificates directory).
 *
 * <p>The server is {@link io.pagewise.nbd.server.NbdServer}, the client {@link io.pagewise.nbd.client.NbdClient};
 * neither package uses the other.
 *
 * <pre>{@code
 * try (FileDevice disk = FileDevice.open(path, CacheMode.EVICT, READ, WRITE);
 *      NbdServer server = NbdServer.builder().export("", disk).unixSocket(socket).start();
 *      NbdClient client = NbdClient.connect(server.uri())) {
 *     int n = client.read(buffer, 0);       // as FileChannel: moves the position by n; -1 at the end of the export
 * }
 * }</pre>
 */
package io.pagewise.nbd;

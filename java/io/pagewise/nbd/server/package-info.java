/**
 * The NBD server: {@link io.pagewise.nbd.server.NbdServer} serves one or more
 * {@link io.pagewise.device.BlockDevice}s over TCP or a Unix socket to any NBD client (nbdinfo, nbdcopy, qemu-img,
 * the kernel's nbd-client), and {@link io.pagewise.nbd.server.ServerStats} counts what it did. A
 * {@link io.pagewise.backends.FileDevice} serves a file through a {@link io.pagewise.StorageFile}, so its cache mode
 * applies; the server answers a device's failure with the NBD error nearest its errno
 * ({@link io.pagewise.device.DeviceException#errnoOf}).
 *
 * <p>Inside, in packages the module does not export: {@code service} (the listener and socket files, admission and
 * connection lifecycle), {@code protocol} (the handshake and the transmission phase, where a request travels reader,
 * executor, encoder once each), {@code exports} (finding an export by name), {@code access} (who may connect) and
 * {@code metrics} (JMX and Prometheus).
 */
package io.pagewise.nbd.server;

/**
 * An NBD (Network Block Device) server and client.
 *
 * <p>{@link io.pagewise.nbd.NbdServer} serves one or more {@link io.pagewise.device.BlockDevice}s over TCP or a Unix
 * socket to any NBD client (nbdinfo, nbdcopy, qemu-img, the kernel's nbd-client); a
 * {@link io.pagewise.devices.FileDevice} serves a file through a {@link io.pagewise.StorageFile}, so its cache mode
 * applies. {@link io.pagewise.nbd.NbdClient} reads and writes an export, with many requests in flight;
 * {@link io.pagewise.devices.NbdDevice} makes an export a device again, so a server can proxy another.
 *
 * <pre>{@code
 * try (FileDevice disk = FileDevice.open(path, CacheMode.EVICT, READ, WRITE);
 *      NbdServer server = NbdServer.builder().export("", disk).unixSocket(socket).start();
 *      NbdClient client = NbdClient.connect(server.uri())) {
 *     int n = client.read(buffer, 0);       // as FileChannel: moves the position by n; -1 at the end of the export
 * }
 * }</pre>
 *
 * <p>The client keeps FileChannel's buffer conventions (its asynchronous requests AsynchronousFileChannel's), as its
 * documentation says. The server answers a device's failure with the NBD error nearest its errno
 * ({@link io.pagewise.device.DeviceException#errnoOf}).
 */
package io.pagewise.nbd;

/**
 * An NBD (Network Block Device) server and client.
 *
 * <p>{@link io.pagewise.nbd.NbdServer} serves one or more {@link io.pagewise.nbd.Export}s over TCP or a Unix socket
 * to any NBD client (nbdinfo, nbdcopy, qemu-img, the kernel's nbd-client); {@link io.pagewise.nbd.FileExport} serves
 * a file through a {@link io.pagewise.StorageFile}, so its cache mode applies. {@link io.pagewise.nbd.NbdClient}
 * reads and writes an export, with many requests in flight.
 *
 * <pre>{@code
 * try (FileExport disk = FileExport.open(path, CacheMode.EVICT, false);
 *      NbdServer server = NbdServer.builder().export("", disk).unixSocket(socket).start();
 *      NbdClient client = NbdClient.connect(server.uri())) {
 *     int n = client.read(buffer, 0);       // as FileChannel: moves the position by n; -1 at the end of the export
 * }
 * }</pre>
 *
 * <p>{@link io.pagewise.nbd.Export} implementations and the client keep FileChannel's buffer conventions (the
 * client's asynchronous requests AsynchronousFileChannel's), as their documentation says.
 */
package io.pagewise.nbd;

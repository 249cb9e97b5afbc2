/**
 * The NBD client: {@link io.pagewise.nbd.client.NbdClient} reads and writes an export of any NBD server, with many
 * requests in flight over one or more connections, and {@link io.pagewise.nbd.client.ExportInfo} says what the
 * server negotiated. It keeps FileChannel's buffer conventions (its asynchronous requests
 * AsynchronousFileChannel's). {@link io.pagewise.backends.NbdDevice} makes an export a device again, so that the
 * copier reads and writes it and a server can proxy it.
 */
package io.pagewise.nbd.client;

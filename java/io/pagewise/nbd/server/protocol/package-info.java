/**
 * The NBD protocol as the server speaks it, one connection at a time: {@link
 * io.pagewise.nbd.server.protocol.Handshake} (options up to GO), then {@link
 * io.pagewise.nbd.server.protocol.Transmission} (receive, execute, send), where a request travels {@link
 * io.pagewise.nbd.server.protocol.RequestReader}, {@link io.pagewise.nbd.server.protocol.RequestExecutor} and {@link
 * io.pagewise.nbd.server.protocol.ReplyEncoder} once each; with the in-flight budgets and payload buffers every
 * connection of a server shares ({@link io.pagewise.nbd.server.protocol.ServerContext}). Knows nothing of sockets
 * being accepted or of the service around it.
 */
package io.pagewise.nbd.server.protocol;

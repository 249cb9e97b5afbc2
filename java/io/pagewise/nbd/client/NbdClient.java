package io.pagewise.nbd.client;

import static io.pagewise.nbd.wire.Protocol.*;

import io.pagewise.Extent;
import io.pagewise.device.DeviceException;
import io.pagewise.device.ZeroFlag;
import io.pagewise.internal.ClosedWithMessage;
import java.io.Closeable;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import javax.net.ssl.SSLContext;
import io.pagewise.nbd.NbdUri;
import io.pagewise.nbd.NbdException;
import io.pagewise.nbd.TlsCertificates;

/**
 * An NBD client for one export, over one or (when the server advertises multi-conn) several connections.
 *
 * <pre>{@code
 * try (NbdClient nbd = NbdClient.connect("nbd+unix:///disk?socket=/run/nbd.sock", 4)) {
 *     ByteBuffer block = ByteBuffer.allocateDirect(65536);
 *     int n = nbd.read(block, 0);                             // 65536, holes as zeros; block.position() == 65536
 *     CompletableFuture<Void> w = nbd.writeAsync(block.flip(), 1 << 20, false); // position moves on completion
 *     List<Extent> map = nbd.extents(0, nbd.size());          // BLOCK_STATUS: hole = reads as zeros
 * }
 * }</pre>
 *
 * <p>Buffers follow {@link java.nio.channels.AsynchronousFileChannel}'s conventions. A read or write moves the
 * buffer's position by the bytes transferred; an asynchronous one moves it when the server has replied with
 * success, just before its future completes (so code that runs after the future sees the new position), and never
 * when the future fails. The buffer belongs to the request until then: do not touch it. {@link #read} returns -1
 * when offset is at or past the end of the export, and reads only up to the end. An export does not grow as a
 * file does, so every other request must lie within it: one outside fails with a {@link DeviceException} (EINVAL),
 * an IOException, as a device would answer it. The payload of
 * {@link #readAsync} and {@link #writeAsync} must not exceed {@link ExportInfo#maximumPayload()}; the blocking
 * {@link #read}, {@link #readFully} and {@link #write} split longer ones into requests in flight at once.
 *
 * <p>Thread-safe; the {@code *Async} methods return at once, so any number of requests may be in flight. Server
 * errors complete the futures (and make the blocking methods throw) with {@link NbdException}; a lost connection
 * fails every request still in flight with an IOException naming the request; requests after {@link #close()}
 * fail with {@link java.nio.channels.ClosedChannelException}.
 *
 * <p>TLS: an {@code nbds://} or {@code nbds+unix://} URI (or an {@link SSLContext} given to
 * {@link #connect(NbdUri, int, SSLContext)}) makes every connection send STARTTLS first and fail when the server
 * refuses it. The server's certificate must chain to the CAs of the URI's {@code tls-certificates} directory (see
 * {@link TlsCertificates#clientContext}), or to the JDK's default trust store without one; over TCP it must also
 * name the URI's host (DNS name or IP address), or its {@code tls-hostname} wherever that is given. The client
 * presents {@code client-cert.pem} when the directory holds it. {@code tls-verify-peer=false} turns the checks of
 * the server off (see {@link NbdUri}).
 *
 * <p>Interrupts: a request from a thread whose interrupt status is set is not sent; its future fails with
 * {@link InterruptedIOException} and the connections stay up for other requests. A thread interrupted while it is
 * sending a request (a write blocked on a server that does not read) closes that connection, as an interrupt closes
 * any NIO channel: the requests in flight on it, and the later ones that would go over it, fail naming the
 * interrupt; reconnect to go on. A blocking {@code read} or {@code write} interrupted while it waits for its reply
 * goes on waiting, since the request would otherwise go on using the caller's buffer after the call returned: it
 * returns (or fails) as the request does, with the interrupt status set; {@link #close()} ends the wait.
 */
public final class NbdClient implements Closeable {
    private final NbdUri uri;
    private final ExportInfo info;
    private final List<ClientConnection> connections;
    private final AtomicInteger next = new AtomicInteger();
    /** Set when close begins: later requests fail with ClosedChannelException. */
    private volatile boolean closed;

    /** The meta contexts besides base:allocation that the server selected, on every connection. */
    private final List<String> metaContexts;

    NbdClient(NbdUri uri, ExportInfo info, List<ClientConnection> connections, List<String> metaContexts) {
        this.uri = uri;
        this.info = info;
        this.connections = connections;
        this.metaContexts = metaContexts;
    }

    /**
     * Connects to an export over one connection.
     *
     * @param uri the export's URI: {@code nbd://HOST[:PORT]/EXPORT} or {@code nbd+unix:///EXPORT?socket=PATH}
     * @return the connected client
     * @throws IOException when the server cannot be reached or the handshake fails
     * @throws IllegalArgumentException when uri is not an NBD URI
     */
    public static NbdClient connect(String uri) throws IOException {
        return connect(NbdUri.parse(uri), 1);
    }

    /**
     * Connects, then opens up to connections - 1 more when the server says they see each other's writes.
     *
     * @param uri         the export's URI: {@code nbd://HOST[:PORT]/EXPORT} or {@code nbd+unix:///EXPORT?socket=PATH}
     * @param connections how many connections to use at most
     * @return the connected client
     * @throws IOException when the server cannot be reached or a handshake fails
     * @throws IllegalArgumentException when uri is not an NBD URI or connections is below 1
     */
    public static NbdClient connect(String uri, int connections) throws IOException {
        return connect(NbdUri.parse(uri), connections);
    }

    /**
     * Connects, then opens up to connections - 1 more when the server says they see each other's writes.
     *
     * @param uri         the export's address and name
     * @param connections how many connections to use at most
     * @return the connected client
     * @throws IOException when the server cannot be reached or a handshake fails
     * @throws IllegalArgumentException when connections is below 1
     */
    public static NbdClient connect(NbdUri uri, int connections) throws IOException {
        return connect(uri, connections, List.of());
    }

    /**
     * Connects as {@link #connect(NbdUri, int)} does, and also selects meta contexts besides base:allocation, such
     * as {@code qemu:dirty-bitmap:NAME}, whose status {@link #blockStatus} then reads.
     *
     * @param uri          the export's address and name
     * @param connections  how many connections to use at most
     * @param metaContexts full names of the meta contexts to select
     * @return the connected client
     * @throws IOException when the server cannot be reached, a handshake fails, or the server does not offer one of
     *                     the meta contexts (the message names it)
     * @throws IllegalArgumentException when connections is below 1
     */
    public static NbdClient connect(NbdUri uri, int connections, List<String> metaContexts) throws IOException {
        SSLContext tls = ClientConnector.tlsContext(uri);
        return connect(uri, connections, tls, metaContexts);
    }

    /**
     * Connects over TLS with the given context (whatever the URI's scheme), then opens up to connections - 1 more
     * when the server says they see each other's writes. The context alone decides whom to trust: the URI's
     * {@code tls-certificates} is not read, and its {@code tls-verify-peer=false} only drops the host name check;
     * its {@code tls-hostname} is the name checked.
     *
     * @param uri         the export's address and name
     * @param connections how many connections to use at most
     * @param tls         where the trusted CAs (and the client's certificate, if any) come from, or null for no TLS
     * @return the connected client
     * @throws IOException when the server cannot be reached, refuses TLS, is not trusted, or a handshake fails
     * @throws IllegalArgumentException when connections is below 1
     */
    public static NbdClient connect(NbdUri uri, int connections, SSLContext tls) throws IOException {
        return connect(uri, connections, tls, List.of());
    }

    /**
     * Connects as {@link #connect(NbdUri, int, SSLContext)} does, and also selects meta contexts besides
     * base:allocation, such as {@code qemu:dirty-bitmap:NAME}, whose status {@link #blockStatus} then reads.
     *
     * @param uri          the export's address and name
     * @param connections  how many connections to use at most
     * @param tls          where the trusted CAs come from, or null for no TLS
     * @param metaContexts full names of the meta contexts to select
     * @return the connected client
     * @throws IOException when the server cannot be reached, refuses TLS, a handshake fails, or the server does not
     *                     offer one of the meta contexts (the message names it)
     * @throws IllegalArgumentException when connections is below 1
     */
    public static NbdClient connect(NbdUri uri, int connections, SSLContext tls, List<String> metaContexts)
            throws IOException {
        return ClientConnector.connect(uri, connections, tls, metaContexts);
    }

    /** {@return the URI this client connected to} */
    public NbdUri uri() { return uri; }

    /** {@return what the server said about the export in the handshake} */
    public ExportInfo info() { return info; }

    /** {@return the export's size in bytes} */
    public long size() { return info.size(); }

    /** {@return the connections in use: 1 unless the server advertised multi-conn} */
    public int connectionCount() { return connections.size(); }

    /**
     * Reads up to dst.remaining() bytes at offset into dst (holes as zeros), as
     * {@link java.nio.channels.AsynchronousFileChannel#read(ByteBuffer, long)} does: all of them, or those up to
     * the end of the export. When the server has replied, dst's position moves past the bytes read and then the
     * future completes with their count; a failed read leaves the position alone.
     *
     * @param dst    the buffer to fill; it must not be touched until the future completes
     * @param offset where in the export to read from
     * @return a future completed with the bytes read; with -1 at once when offset is at or past the end of the
     *         export (and dst has room), with 0 at once when dst has no room
     * @throws IllegalArgumentException when offset is negative, when dst is read-only, or when the read is longer
     *         than {@link ExportInfo#maximumPayload()}
     */
    public CompletableFuture<Integer> readAsync(ByteBuffer dst, long offset) {
        // The reader thread would fail on a read-only buffer and take the connection with it; refuse as FileChannel does.
        if (dst.isReadOnly()) throw new IllegalArgumentException("read into a read-only buffer");
        if (offset < 0) throw new IllegalArgumentException("READ at " + offset + ": the offset is negative");
        if (closed) return closedFailure();
        if (!dst.hasRemaining()) return CompletableFuture.completedFuture(0);
        if (offset >= info.size()) return CompletableFuture.completedFuture(-1);
        int length = (int) Math.min(dst.remaining(), info.size() - offset);
        checkPayload(CMD_READ, length); // within the export: clipped to its end above
        int start = dst.position();
        ClientConnection.Request r = new ClientConnection.Request(CMD_READ, offset, length, dst.slice(start, length), null);
        return afterSuccess(pick().submit(r, 0, null), () -> {
            dst.position(start + length);
            return length;
        });
    }

    /**
     * Writes all of src.remaining() bytes at offset. When the server has replied with success, src's position moves
     * to its limit and then the future completes; a failed write leaves the position alone.
     *
     * @param src    the bytes to write; they must not change until the future completes
     * @param offset where in the export to write them
     * @param fua    when true (and the server takes FUA) the data is durable when the server replies
     * @return a future completed when the server has replied
     * @throws IllegalArgumentException never for the range: one outside the export (or too long for one request)
     *         fails the future with a {@link DeviceException} (EINVAL)
     */
    public CompletableFuture<Void> writeAsync(ByteBuffer src, long offset, boolean fua) {
        int length = src.remaining();
        if (length > info.maximumPayload()) {
            return CompletableFuture.failedFuture(new DeviceException(DeviceException.EINVAL, tooLong(CMD_WRITE, length)));
        }
        if (!inExport(offset, length)) return outside(CMD_WRITE, offset, length);
        if (closed) return closedFailure();
        if (info.isReadOnly()) return refused(CMD_WRITE, offset, length, NbdException.EPERM, "the export is read-only");
        int start = src.position();
        ClientConnection.Request r = new ClientConnection.Request(CMD_WRITE, offset, length, null, null);
        return afterSuccess(pick().submit(r, fua && info.canFua() ? CMD_FLAG_FUA : 0, src.duplicate()), () -> {
            src.position(start + length);
            return null;
        });
    }

    /**
     * Makes completed writes durable; does nothing when the server does not take FLUSH.
     *
     * @return a future completed when the server has replied
     */
    public CompletableFuture<Void> flushAsync() {
        if (closed) return closedFailure();
        if (!info.canFlush()) return CompletableFuture.completedFuture(null);
        // There is one connection unless the server promised multi-conn, under which one flush covers them all.
        return pick().submit(new ClientConnection.Request(CMD_FLUSH, 0, 0, null, null), 0, null);
    }

    /**
     * Tells the server it may release a range; the range's contents become unspecified.
     *
     * @param offset the start of the range
     * @param length the length of the range
     * @return a future completed when the server has replied; failed with {@link NbdException} (ENOTSUP) when the
     *         server does not take TRIM
     * @throws IllegalArgumentException never for the range: one outside the export (or too long for one request)
     *         fails the future with a {@link DeviceException} (EINVAL)
     */
    public CompletableFuture<Void> trimAsync(long offset, long length) {
        if (!inExport(offset, length)) return outside(CMD_TRIM, offset, length);
        if (closed) return closedFailure();
        if (!info.canTrim()) return refused(CMD_TRIM, offset, length, "the server does not accept TRIM");
        return pick().submit(new ClientConnection.Request(CMD_TRIM, offset, length, null, null), 0, null);
    }

    /**
     * Zeroes a range (WRITE_ZEROES): without {@link ZeroFlag#MAY_TRIM} the server must not leave a hole there
     * (NO_HOLE); with {@link ZeroFlag#FAST} it fails with ENOTSUP rather than be slow (FAST_ZERO, refused here at
     * once when the server does not take it); with {@link ZeroFlag#FUA} the zeros are durable on the reply (when the
     * server takes FUA).
     *
     * @param offset the start of the range
     * @param length the length of the range
     * @param flags  how to zero, as {@link io.pagewise.device.BlockDevice#zero} takes them
     * @return a future completed when the server has replied; failed with {@link NbdException} (ENOTSUP) when the
     *         server does not take WRITE_ZEROES, or FAST_ZERO when asked for
     * @throws IllegalArgumentException never for the range: one outside the export (or too long for one request)
     *         fails the future with a {@link DeviceException} (EINVAL)
     */
    public CompletableFuture<Void> zeroAsync(long offset, long length, Set<ZeroFlag> flags) {
        if (!inExport(offset, length)) return outside(CMD_WRITE_ZEROES, offset, length);
        if (closed) return closedFailure();
        if (!info.canZero()) {
            return refused(CMD_WRITE_ZEROES, offset, length, "the server does not accept WRITE_ZEROES");
        }
        boolean fast = flags.contains(ZeroFlag.FAST);
        if (fast && !info.canFastZero()) {
            return refused(CMD_WRITE_ZEROES, offset, length, "the server does not accept FAST_ZERO");
        }
        int commandFlags = (flags.contains(ZeroFlag.MAY_TRIM) ? 0 : CMD_FLAG_NO_HOLE) | (fast ? CMD_FLAG_FAST_ZERO : 0)
                | (flags.contains(ZeroFlag.FUA) && info.canFua() ? CMD_FLAG_FUA : 0);
        return pick().submit(new ClientConnection.Request(CMD_WRITE_ZEROES, offset, length, null, null), commandFlags, null);
    }

    /**
     * The allocation map of a range from {@code base:allocation}; {@link Extent#hole()} means the range reads as
     * zeros. The server may describe less than asked (at least one extent) or a little more; ask again from the
     * end of the list for the rest. Of what a server sends, at most 131,072 extents are kept (the most qemu-nbd
     * sends), and none that starts past the range, so a hostile reply costs time on the wire rather than memory; a
     * reply chunk over 64 MiB fails the connection, as in libnbd. Without {@code base:allocation} the whole range
     * is one data extent.
     *
     * @param offset the start of the range
     * @param length the length of the range
     * @return a future completed with the extents, in order from offset
     * @throws IllegalArgumentException never for the range: one outside the export (or too long for one request)
     *         fails the future with a {@link DeviceException} (EINVAL)
     */
    public CompletableFuture<List<Extent>> extentsAsync(long offset, long length) {
        if (!inExport(offset, length)) return outside(CMD_BLOCK_STATUS, offset, length);
        if (closed) return closedFailure();
        if (!info.canExtents()) {
            return CompletableFuture.completedFuture(List.of(new Extent(offset, length, false)));
        }
        List<Extent> extents = new ArrayList<>();
        ClientConnection.Request r = new ClientConnection.Request(CMD_BLOCK_STATUS, offset, length, null, extents);
        return pick().submit(r, 0, null).thenApply(ignored -> extents);
    }

    /** {@return the meta contexts besides base:allocation this client selected}, as given to connect */
    public List<String> metaContexts() { return metaContexts; }

    /**
     * The status of a range in a meta context selected at connect (such as {@code qemu:dirty-bitmap:NAME}), as the
     * server sent it: descriptors in order from offset, the flags as that context defines them. Like
     * {@link #extentsAsync}, the server may describe less than asked (at least one descriptor); ask again from the
     * end for the rest. At most 131,072 descriptors are kept.
     *
     * @param context the full name of a context given to connect
     * @param offset  the start of the range
     * @param length  the length of the range
     * @return a future completed with the descriptors
     * @throws IllegalArgumentException never: a context not selected, or a range outside the export, fails the
     *         future with a {@link DeviceException} (EINVAL)
     */
    public CompletableFuture<List<BlockStatus>> blockStatusAsync(String context, long offset, long length) {
        if (!inExport(offset, length)) return outside(CMD_BLOCK_STATUS, offset, length);
        if (closed) return closedFailure();
        if (!metaContexts.contains(context)) {
            return CompletableFuture.failedFuture(new DeviceException(DeviceException.EINVAL, "BLOCK_STATUS for meta"
                    + " context " + context + ", which this client did not select (selected: " + metaContexts + ")"));
        }
        List<BlockStatus> statuses = new ArrayList<>();
        ClientConnection.Request r = new ClientConnection.Request(context, offset, length, statuses);
        return pick().submit(r, 0, null).thenApply(ignored -> statuses);
    }

    /**
     * As {@link #blockStatusAsync}, but waits for the reply.
     *
     * @param context the full name of a context given to connect
     * @param offset  the start of the range
     * @param length  the length of the range
     * @return the descriptors, in order from offset
     * @throws IOException the failure the future of the asynchronous form would carry
     */
    public List<BlockStatus> blockStatus(String context, long offset, long length) throws IOException {
        return await(blockStatusAsync(context, offset, length));
    }

    /**
     * As {@link #readAsync}, but waits for the replies: reads up to dst.remaining() bytes at offset into dst and
     * moves its position past them, as {@link java.nio.channels.FileChannel#read(ByteBuffer, long)} does; a read
     * longer than the server's maximum payload goes as several requests, all in flight at once.
     *
     * @param dst    the buffer to fill
     * @param offset where in the export to read from
     * @return the bytes read: all of dst.remaining() unless the export ends first; -1 when offset is at or past the
     *         end of the export (and dst has room), 0 only when dst has no room
     * @throws IOException the failure the future of the asynchronous form would carry; dst's position is then left
     *         alone
     * @throws IllegalArgumentException when offset is negative or dst is read-only
     */
    public int read(ByteBuffer dst, long offset) throws IOException {
        if (dst.isReadOnly()) throw new IllegalArgumentException("read into a read-only buffer");
        if (offset < 0) throw new IllegalArgumentException("READ at " + offset + ": the offset is negative");
        int max = info.maximumPayload();
        if (dst.remaining() <= max || offset >= info.size()) return awaitBuffer(readAsync(dst, offset));
        // Longer than one request may be: requests of the server's maximum, all in flight at once.
        int length = (int) Math.min(dst.remaining(), info.size() - offset);
        int start = dst.position();
        List<CompletableFuture<Integer>> parts = new ArrayList<>();
        for (int done = 0; done < length; done += max) {
            parts.add(readAsync(dst.slice(start + done, Math.min(max, length - done)), offset + done));
        }
        awaitAll(parts);
        dst.position(start + length);
        return length;
    }

    /**
     * Fills all of dst's remaining bytes with the data at offset and moves its position to its limit, as
     * {@link io.pagewise.StorageFile#readFully(ByteBuffer, long)} does; in as many requests as the server's maximum
     * payload needs.
     *
     * @param dst    the buffer to fill
     * @param offset where in the export to read from
     * @throws java.io.EOFException when the export ends before dst is full
     * @throws IOException the failure of a request
     * @throws IllegalArgumentException when offset is negative or dst is read-only
     */
    public void readFully(ByteBuffer dst, long offset) throws IOException {
        int wanted = dst.remaining();
        int n = read(dst, offset);
        if (n < wanted) {
            throw new java.io.EOFException("READ at " + offset + " (+" + wanted + "): " + uri.text() + " ends at "
                    + info.size());
        }
    }

    /**
     * As {@link #writeAsync}, but waits for the replies: in as many requests as the server's maximum payload needs,
     * all in flight at once.
     *
     * @param src    the bytes to write; its position moves to its limit once every request succeeded
     * @param offset where in the export to write them
     * @param fua    when true (and the server takes FUA) the data is durable when this returns
     * @throws IOException the failure of a request; src's position is then left alone
     * @throws DeviceException (EINVAL) when the range lies outside the export
     */
    public void write(ByteBuffer src, long offset, boolean fua) throws IOException {
        int max = info.maximumPayload();
        int length = src.remaining();
        if (length <= max) {
            awaitBuffer(writeAsync(src, offset, fua));
            return;
        }
        if (!inExport(offset, length)) await(outside(CMD_WRITE, offset, length));
        int start = src.position();
        List<CompletableFuture<Void>> parts = new ArrayList<>();
        for (int done = 0; done < length; done += max) {
            parts.add(writeAsync(src.slice(start + done, Math.min(max, length - done)), offset + done, fua));
        }
        awaitAll(parts);
        src.position(start + length);
    }

    /**
     * As {@link #write(ByteBuffer, long, boolean)} without FUA, as {@link io.pagewise.StorageFile#write(ByteBuffer,
     * long)} takes it.
     *
     * @param src    the bytes to write; its position moves to its limit
     * @param offset where in the export to write them
     * @throws IOException the failure of a request
     * @throws DeviceException (EINVAL) when the range lies outside the export
     */
    public void write(ByteBuffer src, long offset) throws IOException {
        write(src, offset, false);
    }

    /** Waits for every future, so that no request still uses a buffer when this returns; throws the first failure. */
    private static void awaitAll(List<? extends CompletableFuture<?>> futures) throws IOException {
        IOException first = null;
        for (CompletableFuture<?> future : futures) {
            try {
                awaitBuffer(future);
            } catch (IOException e) {
                if (first == null) first = e;
            }
        }
        if (first != null) throw first;
    }

    /**
     * As {@link #flushAsync}, but waits for the reply.
     *
     * @throws IOException the failure the future of the asynchronous form would carry
     */
    public void flush() throws IOException {
        await(flushAsync());
    }

    /**
     * As {@link #trimAsync}, but waits for the reply.
     *
     * @param offset the start of the range
     * @param length the length of the range
     * @throws IOException the failure the future of the asynchronous form would carry
     * @throws IllegalArgumentException never for the range: one outside the export (or too long for one request)
     *         fails the future with a {@link DeviceException} (EINVAL)
     */
    public void trim(long offset, long length) throws IOException {
        await(trimAsync(offset, length));
    }

    /**
     * As {@link #zeroAsync}, but waits for the reply.
     *
     * @param offset the start of the range
     * @param length the length of the range
     * @param flags  how to zero, as {@link #zeroAsync} takes them
     * @throws IOException the failure the future of the asynchronous form would carry
     * @throws IllegalArgumentException never for the range: one outside the export (or too long for one request)
     *         fails the future with a {@link DeviceException} (EINVAL)
     */
    public void zero(long offset, long length, Set<ZeroFlag> flags) throws IOException {
        await(zeroAsync(offset, length, flags));
    }

    /**
     * As {@link #extentsAsync}, but waits for the reply.
     *
     * @param offset the start of the range
     * @param length the length of the range
     * @return the extents, in order from offset
     * @throws IOException the failure the future of the asynchronous form would carry
     * @throws IllegalArgumentException never for the range: one outside the export (or too long for one request)
     *         fails the future with a {@link DeviceException} (EINVAL)
     */
    public List<Extent> extents(long offset, long length) throws IOException {
        return await(extentsAsync(offset, length));
    }

    /**
     * Waits for a future of this client, turning its failure back into the IOException it carries.
     *
     * @param <T>    the future's value type
     * @param future a future returned by this client
     * @return the future's value
     * @throws IOException the failure the future carries, or {@link InterruptedIOException} when interrupted
     */
    public static <T> T await(CompletableFuture<T> future) throws IOException {
        try {
            return future.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while waiting for an NBD reply");
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof NbdException) {
                throw (NbdException) cause;
            }
            if (cause instanceof IOException) throw (IOException) cause;
            if (cause instanceof RuntimeException) throw (RuntimeException) cause;
            throw new IOException(cause);
        }
    }

    /**
     * Waits for a request that uses the caller's buffer to end, even when interrupted: returning at the interrupt
     * would leave the request filling or reading the buffer after the call. The interrupt status stays set.
     */
    private static <T> T awaitBuffer(CompletableFuture<T> future) throws IOException {
        try {
            future.join(); // not interruptible; sets the interrupt status again if it was interrupted
        } catch (java.util.concurrent.CompletionException | java.util.concurrent.CancellationException e) {
            // await below throws the failure as the asynchronous form carries it
        }
        return await(future);
    }

    /**
     * A future that, once reply succeeds, runs then (which moves the buffer's position) and completes with its
     * value; when reply fails it fails with the same exception, unwrapped, as reply itself would.
     */
    private static <T> CompletableFuture<T> afterSuccess(CompletableFuture<Void> reply, Supplier<T> then) {
        CompletableFuture<T> result = new CompletableFuture<>();
        reply.whenComplete((ignored, failure) -> {
            if (failure != null) {
                result.completeExceptionally(failure);
                return;
            }
            try {
                result.complete(then.get());
            } catch (RuntimeException e) {
                result.completeExceptionally(e); // the caller moved the buffer's limit while the request ran
            }
        });
        return result;
    }

    private ClientConnection pick() {
        if (connections.size() == 1) return connections.get(0);
        return connections.get(Math.floorMod(next.getAndIncrement(), connections.size()));
    }

    private void checkPayload(int command, int length) {
        if (length > info.maximumPayload()) throw new IllegalArgumentException(tooLong(command, length));
    }

    private String tooLong(int command, int length) {
        return commandName(command) + " of " + length + " bytes exceeds the server's maximum payload of "
                + info.maximumPayload();
    }

    private boolean inExport(long offset, long length) {
        // Extended headers carry 64-bit lengths; compact ones 32 bits.
        return offset >= 0 && length >= 0 && (info.extendedHeaders() || length <= 0xffffffffL)
                && offset <= info.size() - length;
    }

    /** A range outside the export fails as an I/O error (EINVAL), as a file's device would answer it. */
    private <T> CompletableFuture<T> outside(int command, long offset, long length) {
        return CompletableFuture.failedFuture(new DeviceException(DeviceException.EINVAL, commandName(command) + " at "
                + offset + " (+" + length + ") is outside the export of " + info.size() + " bytes or too long for"
                + " one request"));
    }

    private <T> CompletableFuture<T> closedFailure() {
        return CompletableFuture.failedFuture(new ClosedWithMessage("NBD client for " + uri.text() + " is closed"));
    }

    private <T> CompletableFuture<T> refused(int command, long offset, long length, String why) {
        return refused(command, offset, length, NbdException.ENOTSUP, why);
    }

    /** Fails a request the server would refuse, without sending it: EPERM as the server would answer, else ENOTSUP. */
    private <T> CompletableFuture<T> refused(int command, long offset, long length, int error, String why) {
        return CompletableFuture.failedFuture(new NbdException(commandName(command), offset, length, error, why,
                uri.text()));
    }

    /**
     * Sends DISC on every connection and closes them. Requests made afterwards fail with
     * {@link java.nio.channels.ClosedChannelException}. A server that stopped reading does not hold it up: after
     * about two seconds each socket is closed under the send waiting on it, and that request fails.
     *
     * @throws IOException when a connection fails to close; the others are closed all the same
     */
    @Override
    public void close() throws IOException {
        closed = true;
        IOException first = null;
        for (ClientConnection c : connections) {
            try {
                c.close();
            } catch (IOException e) {
                if (first == null) first = e; else first.addSuppressed(e);
            }
        }
        if (first != null) throw first;
    }
}

package io.pagewise.device;

import io.pagewise.Extent;
import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Set;

/**
 * A block device: a fixed number of bytes that can be read, written, zeroed, trimmed, flushed, mapped (data and
 * holes) and prefetched. The NBD server serves one, the copier copies from one to another, and a
 * {@link FilterDevice} wraps one to change what it does.
 *
 * <p>Callers ask only for ranges within {@link #size()} and only for operations that the device's
 * {@link #capabilities()} name ({@link Capability#WRITE}, {@link Capability#ZERO}, …); an operation the device
 * cannot do throws a {@link DeviceException} with {@link DeviceException#ENOTSUP} or, for a write to a read-only
 * device, {@link DeviceException#EPERM}. Implementations are thread-safe: the server and the copier call them from many
 * threads at once.
 *
 * <p>Buffers follow {@link java.nio.channels.FileChannel}'s convention: {@link #readFully} and {@link #write} move
 * each buffer's position by the bytes transferred, which is all of {@code remaining()}. Callers check that they did.
 *
 * <p>Errors are {@link IOException}s; {@link DeviceException#errnoOf(Throwable)} gives the errno a caller (the NBD
 * server, for its error reply) reports for any of them.
 */
public interface BlockDevice extends Closeable {
    /** {@return how the device is named in messages, such as a path or a URI} (default {@code toString()}) */
    default String name() {
        return toString();
    }

    /**
     * {@return the size in bytes}; it does not change while the device is open
     *
     * @throws IOException when the size cannot be found
     */
    long size() throws IOException;

    /**
     * Fills all of dst's remaining bytes with the data at offset and moves its position to its limit.
     *
     * @param dst    the buffer to fill
     * @param offset where to read from; the range lies within {@link #size()}
     * @throws IOException when the read fails
     */
    void readFully(ByteBuffer dst, long offset) throws IOException;

    /**
     * Fills the remaining bytes of dsts, in order, with the data at offset and moves each position to its limit:
     * one vectored read. The default reads each buffer with {@link #readFully(ByteBuffer, long)}; a device that
     * reads a vector at once overrides it (a file device makes it one preadv where its cache mode allows).
     *
     * @param dsts   the buffers to fill, in order
     * @param offset where to read from; the range lies within {@link #size()}
     * @throws IOException when the read fails
     */
    default void readFully(ByteBuffer[] dsts, long offset) throws IOException {
        long at = offset;
        for (ByteBuffer dst : dsts) {
            int length = dst.remaining();
            readFully(dst, at);
            at += length;
        }
    }

    /**
     * Writes all of src's remaining bytes at offset and moves its position to its limit; called only when
     * {@link #capabilities()} name {@link Capability#WRITE}. The default refuses with EPERM.
     *
     * @param src    the bytes to write
     * @param offset where to write them; the range lies within {@link #size()}
     * @param fua    true when the data must be durable before this returns (force unit access), by itself
     * @throws IOException when the write fails
     */
    default void write(ByteBuffer src, long offset, boolean fua) throws IOException {
        throw new DeviceException(DeviceException.EPERM, name() + " is read-only");
    }

    /**
     * Writes the remaining bytes of srcs, in order, at offset and moves each position to its limit: one vectored
     * write; called only when {@link #capabilities()} name {@link Capability#WRITE}. The default writes each
     * buffer with {@link #write(ByteBuffer, long, boolean)}, passing fua to each; a device that writes a vector at
     * once overrides it.
     *
     * @param srcs   the bytes to write, in order
     * @param offset where to write them; the range lies within {@link #size()}
     * @param fua    true when the data must be durable before this returns (force unit access), by itself
     * @throws IOException when the write fails
     */
    default void write(ByteBuffer[] srcs, long offset, boolean fua) throws IOException {
        long at = offset;
        for (ByteBuffer src : srcs) {
            int length = src.remaining();
            write(src, at, fua);
            at += length;
        }
    }

    /**
     * Makes [offset, offset + length) read as zeros; called only when {@link #capabilities()} name
     * {@link Capability#ZERO}. Without {@link ZeroFlag#MAY_TRIM} the range stays allocated; with {@link ZeroFlag#FAST}
     * the device fails with {@link DeviceException#ENOTSUP} rather than be as slow as writing the zeros; with
     * {@link ZeroFlag#FUA} the change is durable before this returns. The default refuses with ENOTSUP.
     *
     * @param offset the start of the range
     * @param length the length of the range
     * @param flags  how to zero; {@link ZeroFlag#NONE} for allocated zeros, however slow
     * @throws IOException when zeroing fails
     */
    default void zero(long offset, long length, Set<ZeroFlag> flags) throws IOException {
        throw new DeviceException(DeviceException.ENOTSUP, name() + " cannot zero");
    }

    /**
     * Releases [offset, offset + length) if it can; the contents become unspecified. Called only when
     * {@link #capabilities()} name {@link Capability#TRIM}. The default does nothing.
     *
     * @param offset the start of the range
     * @param length the length of the range
     * @param fua    true when the change must be durable before this returns
     * @throws IOException when it fails
     */
    default void trim(long offset, long length, boolean fua) throws IOException {}

    /**
     * Makes every write completed so far durable. The default does nothing.
     *
     * @throws IOException when it fails
     */
    default void flush() throws IOException {}

    /**
     * The flush a server makes of the device as it stops, after the last request: {@link #flush()} (the default).
     * A device that counts flushes, such as the stats filter, counts this one apart from the flushes clients ask for.
     *
     * @throws IOException when it fails
     */
    default void flushAtShutdown() throws IOException {
        flush();
    }

    /**
     * The data and hole runs of a range ({@link Extent#hole()} means "reads as zeros"), at most maxExtents of them:
     * callers ask for no more than they use, so a device that can stop early should. The default says the range is
     * all data.
     *
     * @param offset     the start of the range
     * @param length     the length of the range
     * @param maxExtents the most runs the caller will use, at least 1
     * @return at most maxExtents runs in order from offset; they may cover only a prefix of the range, but at least
     *         one byte
     * @throws IOException when the map cannot be read
     */
    default List<Extent> extents(long offset, long length, int maxExtents) throws IOException {
        return List.of(new Extent(offset, length, false));
    }

    /**
     * A hint that the range will be read soon (NBD CACHE): a file device prefetches it into the page cache. The
     * default does nothing.
     *
     * @param offset the start of the range
     * @param length the length of the range
     * @throws IOException when it fails
     */
    default void cache(long offset, long length) throws IOException {}

    /**
     * {@return what the device can do}: which operations callers may ask for, and what they may assume. Only
     * {@link Capability#HOLES} may change while the device is open (a file gains it when a trim or zeroing punches a
     * hole), so a caller that looks for holes on every read asks each time. A filter passes on its device's value,
     * changed where it changes what the device does. The default, {@link Capabilities#NONE}, makes the device
     * read-only and all data.
     */
    default Capabilities capabilities() { return Capabilities.NONE; }

    /** {@return the smallest request size and alignment that is efficient and safe}; 1 (the default) for any */
    default int minimumBlockSize() { return 1; }

    /** {@return the request size and alignment that avoids read-modify-write} (default 4096) */
    default int preferredBlockSize() { return 4096; }

    /**
     * {@return the longest read or write the device takes in one call} (default {@link Integer#MAX_VALUE}); the
     * NBD server advertises it (capped at its own maximum payload) and refuses longer requests with EINVAL
     */
    default int maximumBlockSize() { return Integer.MAX_VALUE; }

    /**
     * {@return the device one user should call}: the NBD server calls this once per client connection, when the
     * connection has chosen this export, and sends that connection's requests to what it returns. A device that
     * keeps state per user (a bandwidth limit per connection) returns a view of itself with that state; every other
     * device returns {@code this} (the default). The view shares the device's data, capabilities and size, and needs
     * no closing: the server drops it when the connection ends and never closes it.
     *
     * @throws IOException when the view cannot be made; the server then closes the connection
     */
    default BlockDevice forConnection() throws IOException { return this; }

    /**
     * Releases what the device holds. Whoever opened the device closes it; the server and the copier never do.
     * The default does nothing.
     *
     * @throws IOException when releasing fails
     */
    @Override
    default void close() throws IOException {}
}

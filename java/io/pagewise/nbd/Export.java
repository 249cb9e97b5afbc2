package io.pagewise.nbd;

import io.pagewise.Extent;
import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;

/**
 * What an NBD server needs from the thing it serves. The server derives the transmission flags it advertises from
 * the {@code can*} queries and never calls an operation whose query says no. Implementations must be thread-safe:
 * requests from every connection run at once, each connection on threads of its own.
 *
 * <p>Buffers follow {@link java.nio.channels.FileChannel}'s convention: {@link #readFully} and {@link #write} move
 * the buffer's position by the bytes transferred, which is all of {@code remaining()}; the server checks that they
 * did, and answers EIO when they did not.
 *
 * <p>Operations signal an NBD error with {@link NbdException}. A failed system call
 * ({@link io.pagewise.SystemCallFailure}) is answered with the NBD error nearest its errno, any other
 * {@link java.nio.file.AccessDeniedException} with EPERM, any other {@link IOException} with EIO (ENOSPC when the
 * message says so).
 */
public interface Export extends Closeable {
    /**
     * {@return the size in bytes}; it must not change while the export is served
     *
     * @throws IOException when the size cannot be found
     */
    long size() throws IOException;

    /**
     * Fills all of dst's remaining bytes with the data at offset and moves its position to its limit. The server
     * asks only for ranges within {@link #size()}, so there is no end of file to meet; an export whose data ends
     * early (a file that shrank) reads zeros there or throws.
     *
     * @param dst    the buffer to fill
     * @param offset where in the export to read from
     * @throws IOException when it fails; an {@link NbdException} names the NBD error to answer with
     */
    void readFully(ByteBuffer dst, long offset) throws IOException;

    /**
     * Fills the remaining bytes of dsts, in order, with the data at offset and moves each buffer's position to its
     * limit: one READ request (or one data run of it) whole. The range lies within {@link #size()}, as for
     * {@link #readFully(ByteBuffer, long)}. The default reads each buffer with {@link #readFully(ByteBuffer, long)};
     * an export that can read a vector at once (as {@link FileExport} does, with one preadv) overrides it.
     *
     * @param dsts   the buffers to fill, in order
     * @param offset where in the export to read from
     * @throws IOException when it fails; an {@link NbdException} names the NBD error to answer with
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
     * Writes the remaining bytes of srcs, in order, at offset and moves each buffer's position to its limit: one
     * WRITE request whole; called only when {@link #canWrite()} says yes. With fua the write must be durable before
     * this returns, by itself: the server sends no FLUSH after it. The default writes each buffer with
     * {@link #write(ByteBuffer, long, boolean)}, passing fua to each; an export that can write a vector at once (as
     * {@link FileExport} does, with one pwritev) overrides it.
     *
     * @param srcs   the bytes to write, in order
     * @param offset where in the export to write them
     * @param fua    when true the data must be durable before this returns (force unit access)
     * @throws IOException when it fails; an {@link NbdException} names the NBD error to answer with
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
     * Writes all of src's remaining bytes at offset and moves its position to its limit; called only when
     * {@link #canWrite()} says yes. The default refuses with EPERM.
     *
     * @param src    the bytes to write (all of its remaining bytes)
     * @param offset where in the export to write them
     * @param fua    when true the data must be durable before this returns (force unit access)
     * @throws IOException when it fails; an {@link NbdException} names the NBD error to answer with
     */
    default void write(ByteBuffer src, long offset, boolean fua) throws IOException {
        throw new NbdException(NbdException.EPERM, "export is read-only");
    }

    /**
     * Makes every write completed so far durable. The default does nothing.
     *
     * @throws IOException when it fails; an {@link NbdException} names the NBD error to answer with
     */
    default void flush() throws IOException {}

    /**
     * Releases [offset, offset + length) if it can; the contents become unspecified. The default does nothing.
     *
     * @param offset the start of the range
     * @param length the length of the range
     * @param fua    when true the change must be durable before this returns
     * @throws IOException when it fails; an {@link NbdException} names the NBD error to answer with
     */
    default void trim(long offset, long length, boolean fua) throws IOException {}

    /**
     * Makes the range read as zeros. The default refuses with EINVAL.
     *
     * @param offset  the start of the range
     * @param length  the length of the range
     * @param mayTrim true when the range may become a hole
     * @param fast    true when it must fail with ENOTSUP rather than be as slow as writing the zeros
     * @param fua     when true the change must be durable before this returns
     * @throws IOException when it fails; an {@link NbdException} names the NBD error to answer with
     */
    default void zero(long offset, long length, boolean mayTrim, boolean fast, boolean fua) throws IOException {
        throw new NbdException(NbdException.EINVAL, "export cannot write zeros");
    }

    /**
     * The data and hole runs of a range, for {@code base:allocation}. The default says the range is all data.
     *
     * @param offset the start of the range
     * @param length the length of the range
     * @return the runs in order from offset; they may cover only a prefix of the range, but at least one byte
     * @throws IOException when it fails; an {@link NbdException} names the NBD error to answer with
     */
    default List<Extent> extents(long offset, long length) throws IOException {
        return List.of(new Extent(offset, length, false));
    }

    /**
     * As {@link #extents(long, long)}, but at most maxExtents runs: the server asks for no more than its reply
     * carries (a BLOCK_STATUS reply, the chunks of a READ), so an export that can stop early should, and make the
     * cost of a lookup follow what it returns rather than the length of the range. The default truncates what
     * {@link #extents(long, long)} returns.
     *
     * @param offset     the start of the range
     * @param length     the length of the range
     * @param maxExtents the most runs the caller will use, at least 1
     * @return at most maxExtents runs in order from offset; they may cover only a prefix of the range, but at
     *         least one byte
     * @throws IOException when it fails; an {@link NbdException} names the NBD error to answer with
     */
    default List<Extent> extents(long offset, long length, int maxExtents) throws IOException {
        List<Extent> extents = extents(offset, length);
        return extents.size() <= maxExtents ? extents : List.copyOf(extents.subList(0, maxExtents));
    }

    /**
     * A hint that the range will be read soon (NBD CACHE). The default does nothing.
     *
     * @param offset the start of the range
     * @param length the length of the range
     * @throws IOException when it fails; an {@link NbdException} names the NBD error to answer with
     */
    default void cache(long offset, long length) throws IOException {}

    /** {@return true when the export takes writes}; false (the default) advertises it read-only */
    default boolean canWrite() { return false; }

    /** {@return true when the server should advertise FLUSH} (default false) */
    default boolean canFlush() { return false; }

    /** {@return true when writes may ask for FUA} (default false; advertised only for writable exports) */
    default boolean canFua() { return false; }

    /** {@return true when the server should advertise TRIM} (default false; writable exports only) */
    default boolean canTrim() { return false; }

    /** {@return true when the server should advertise WRITE_ZEROES} (default false; writable exports only) */
    default boolean canZero() { return false; }

    /** {@return true when zeroing can be fast, so FAST_ZERO is advertised along with WRITE_ZEROES} (default false) */
    default boolean canFastZero() { return false; }

    /** {@return true when {@link #extents} can tell holes from data, so {@code base:allocation} is offered} */
    default boolean canExtents() { return false; }

    /** {@return true when the server should advertise CACHE} (default false) */
    default boolean canCache() { return false; }

    /**
     * {@return false when no range of the export reads as a hole right now}, so a READ need not look for holes to
     * send as OFFSET_HOLE chunks (a lookup per request that costs syscalls on the hot path). Defaults to
     * {@link #canExtents()}.
     */
    default boolean mayHaveHoles() { return canExtents(); }

    /** {@return true when FLUSH and FUA on one connection cover writes made through every other connection} */
    default boolean canMultiConn() { return false; }

    /** {@return the smallest request size and alignment that is efficient and safe}; 1 (the default) when anything goes */
    default int minimumBlockSize() { return 1; }

    /** {@return the request size and alignment that avoids read-modify-write} (default 4096) */
    default int preferredBlockSize() { return 4096; }

    /**
     * Closes what the export holds. The server never calls it: whoever made the export closes it once the server
     * has stopped. The default does nothing.
     *
     * @throws IOException when releasing what it holds fails
     */
    @Override
    default void close() throws IOException {}
}

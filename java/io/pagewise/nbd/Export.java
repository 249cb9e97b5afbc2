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
 * <p>Operations signal an NBD error with {@link NbdException}. A {@link io.pagewise.NativeIOException} is answered
 * with the NBD error nearest its errno, {@link java.nio.file.AccessDeniedException} with EPERM, any other
 * {@link IOException} with EIO (ENOSPC when the message says so).
 */
public interface Export extends Closeable {
    /** The size in bytes; fixed while the export is served. */
    long size() throws IOException;

    /** Fills dst (all of its remaining bytes) from offset; the range lies within {@link #size()}. */
    void read(ByteBuffer dst, long offset) throws IOException;

    /** Writes all of src at offset; with fua, durably before returning. */
    default void write(ByteBuffer src, long offset, boolean fua) throws IOException {
        throw new NbdException(NbdException.EPERM, "export is read-only");
    }

    /** Makes every write completed so far durable. */
    default void flush() throws IOException {}

    /** Releases [offset, offset + length) if it can; the contents become unspecified. */
    default void trim(long offset, long length, boolean fua) throws IOException {}

    /**
     * Makes the range read as zeros. mayTrim allows a hole; fast means fail with ENOTSUP rather than be as slow
     * as writing the zeros.
     */
    default void zero(long offset, long length, boolean mayTrim, boolean fast, boolean fua) throws IOException {
        throw new NbdException(NbdException.EINVAL, "export cannot write zeros");
    }

    /** The data and hole runs of the range, in order; may cover only a prefix of it. */
    default List<Extent> extents(long offset, long length) throws IOException {
        return List.of(new Extent(offset, length, false));
    }

    /** A hint that the range will be read soon. */
    default void cache(long offset, long length) throws IOException {}

    default boolean canWrite() { return false; }

    default boolean canFlush() { return false; }

    default boolean canFua() { return false; }

    default boolean canTrim() { return false; }

    default boolean canZero() { return false; }

    default boolean canFastZero() { return false; }

    default boolean canExtents() { return false; }

    default boolean canCache() { return false; }

    /**
     * False when no range of the export reads as a hole right now, so a READ need not look for holes to send as
     * OFFSET_HOLE chunks (a lookup per request that costs syscalls on the hot path).
     */
    default boolean mayHaveHoles() { return canExtents(); }

    /** True when FLUSH and FUA on one connection cover writes made through every other connection. */
    default boolean canMultiConn() { return false; }

    /** Smallest request size and alignment that is efficient and safe; 1 when anything goes. */
    default int minimumBlockSize() { return 1; }

    default int preferredBlockSize() { return 4096; }

    /** Closes what the export holds; the server calls it only for exports it was asked to own. */
    @Override
    default void close() throws IOException {}
}

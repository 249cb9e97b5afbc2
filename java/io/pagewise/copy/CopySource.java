package io.pagewise.copy;

import io.pagewise.Extent;
import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;

/**
 * Where a copy reads from. Implementations are used by several threads at once. Buffers follow
 * {@link java.nio.channels.FileChannel}'s convention: {@link #readFully} moves the buffer's position by the bytes
 * it reads, which is all of {@code remaining()}.
 */
public interface CopySource extends Closeable {
    /** {@return how the source was named, for messages} */
    String name();

    /**
     * {@return the source's size in bytes}
     *
     * @throws IOException when the size cannot be read
     */
    long size() throws IOException;

    /**
     * The allocation map of [offset, offset + length): extents in order, starting at offset, where
     * {@link Extent#hole()} means "reads as zeros". May cover less than asked, but at least one byte.
     *
     * @param offset the start of the range
     * @param length the length of the range
     * @return the extents in order from offset
     * @throws IOException when the map cannot be read
     */
    List<Extent> extents(long offset, long length) throws IOException;

    /**
     * Fills all of dst's remaining bytes with the data at offset and moves its position to its limit.
     *
     * @param dst    the buffer to fill
     * @param offset where to read from
     * @throws java.io.EOFException when the source ends before dst is full (what dst holds then is unspecified)
     * @throws IOException when the read fails
     */
    void readFully(ByteBuffer dst, long offset) throws IOException;

    /** {@return the size that requests should be multiples of and aligned to} (default 1) */
    default int blockSize() { return 1; }

    /** {@return the longest read this source takes at once} */
    default int maximumRequest() { return Integer.MAX_VALUE; }

    @Override
    default void close() throws IOException {}
}

package io.pagewise.copy;

import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * Where a copy writes to. Implementations are used by several threads at once. Buffers follow
 * {@link java.nio.channels.FileChannel}'s convention: {@link #write} moves the buffer's position by the bytes it
 * writes, which is all of {@code remaining()}.
 */
public interface CopyDestination extends Closeable {
    /** {@return how the destination was named, for messages} */
    String name();

    /**
     * {@return the destination's size in bytes}
     *
     * @throws IOException when the size cannot be read
     */
    long size() throws IOException;

    /**
     * Writes all of src's remaining bytes at offset and moves its position to its limit.
     *
     * @param src    the bytes to write
     * @param offset where to write them
     * @throws IOException when the write fails
     */
    void write(ByteBuffer src, long offset) throws IOException;

    /**
     * Makes a range read as zeros: a hole where possible, allocated zeros when allocate is set.
     *
     * @param offset   the start of the range
     * @param length   the length of the range
     * @param allocate true when the range must stay allocated
     * @throws IOException when zeroing fails
     */
    void zero(long offset, long length, boolean allocate) throws IOException;

    /**
     * Makes every completed write durable.
     *
     * @throws IOException when the flush fails
     */
    void flush() throws IOException;

    /** {@return true when the destination is known to read as zeros everywhere before the copy} (a new sparse file) */
    default boolean startsZeroed() { return false; }

    /** {@return the size that requests should be multiples of and aligned to} (default 1) */
    default int blockSize() { return 1; }

    /** {@return the longest write this destination takes at once} */
    default int maximumRequest() { return Integer.MAX_VALUE; }

    @Override
    default void close() throws IOException {}
}

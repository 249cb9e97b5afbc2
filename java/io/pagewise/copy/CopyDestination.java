package io.pagewise.copy;

import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;

/** Where a copy writes to. Implementations are used by several threads at once. */
public interface CopyDestination extends Closeable {
    /** How the destination was named, for messages. */
    String name();

    long size() throws IOException;

    /** Writes all of src's remaining bytes at offset. */
    void write(ByteBuffer src, long offset) throws IOException;

    /** Makes a range read as zeros: a hole where possible, allocated zeros when allocate is set. */
    void zero(long offset, long length, boolean allocate) throws IOException;

    /** Makes every completed write durable. */
    void flush() throws IOException;

    /** True when the destination is known to read as zeros everywhere before the copy (a new sparse file). */
    default boolean startsZeroed() { return false; }

    /** Requests should be multiples of this and aligned to it. */
    default int blockSize() { return 1; }

    /** The longest write this destination takes at once. */
    default int maximumRequest() { return Integer.MAX_VALUE; }

    @Override
    default void close() throws IOException {}
}

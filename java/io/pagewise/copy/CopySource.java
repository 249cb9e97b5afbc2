package io.pagewise.copy;

import io.pagewise.Extent;
import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;

/** Where a copy reads from. Implementations are used by several threads at once. */
public interface CopySource extends Closeable {
    /** How the source was named, for messages. */
    String name();

    long size() throws IOException;

    /**
     * The allocation map of [offset, offset + length): extents in order, starting at offset, where
     * {@link Extent#hole()} means "reads as zeros". May cover less than asked, but at least one byte.
     */
    List<Extent> extents(long offset, long length) throws IOException;

    /** Fills dst's remaining bytes with the data at offset. */
    void read(ByteBuffer dst, long offset) throws IOException;

    /** Requests should be multiples of this and aligned to it. */
    default int blockSize() { return 1; }

    /** The longest read this source takes at once. */
    default int maximumRequest() { return Integer.MAX_VALUE; }

    @Override
    default void close() throws IOException {}
}

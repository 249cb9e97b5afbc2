package io.pagewise;

/** Counts of the operations a {@link StorageFile} has done since it was opened. */
public record IoStats(long reads, long bytesRead, long writes, long bytesWritten, long flushes, long zeroes,
                      long bytesZeroed, long trims, long bytesTrimmed) {}

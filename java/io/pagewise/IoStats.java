package io.pagewise;

/**
 * Counts of the operations a {@link StorageFile} has done since it was opened.
 *
 * @param reads        read calls
 * @param bytesRead    bytes those calls read
 * @param writes       write calls
 * @param bytesWritten bytes those calls wrote
 * @param flushes      flush calls
 * @param zeroes       zero calls for a non-empty range
 * @param bytesZeroed  bytes those calls zeroed
 * @param trims        trim calls for a non-empty range
 * @param bytesTrimmed bytes those calls were asked to trim
 */
public record IoStats(long reads, long bytesRead, long writes, long bytesWritten, long flushes, long zeroes,
                      long bytesZeroed, long trims, long bytesTrimmed) {}

package io.pagewise;

/**
 * Counts of the operations a {@link StorageFile} has done since it was opened: the calls made to it, then what
 * those calls asked of the kernel (counted where the system calls are made, so a request that went out as several
 * calls counts several times).
 *
 * @param reads              read calls
 * @param bytesRead          bytes those calls read
 * @param writes             write calls
 * @param bytesWritten       bytes those calls wrote
 * @param flushes            flush calls
 * @param zeroes             zero calls for a non-empty range
 * @param bytesZeroed        bytes those calls zeroed
 * @param trims              trim calls for a non-empty range
 * @param bytesTrimmed       bytes those calls were asked to trim
 * @param dontcacheReads     reads that reached the kernel with {@code RWF_DONTCACHE}, counting the one-byte read with
 *                           which a {@code DONTCACHE} file asks at open whether the file system takes the flag
 * @param dontcacheBytesRead bytes those reads read
 * @param dsyncWrites        writes that reached the kernel with {@code RWF_DSYNC}, each durable by itself (on the
 *                           pure-Java path: writes followed by a sync of the file, which {@code syncs} counts too)
 * @param dsyncBytesWritten  bytes those writes wrote
 * @param syncs              syncs of the whole file ({@code fdatasync}): by {@link StorageFile#flush()}, and on the
 *                           pure-Java path by FUA and WRITETHROUGH writes
 */
public record IoStats(long reads, long bytesRead, long writes, long bytesWritten, long flushes, long zeroes,
                      long bytesZeroed, long trims, long bytesTrimmed, long dontcacheReads, long dontcacheBytesRead,
                      long dsyncWrites, long dsyncBytesWritten, long syncs) {}

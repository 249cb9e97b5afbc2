package io.pagewise.copy;

/**
 * What a finished copy did.
 *
 * @param size         bytes covered (the source size)
 * @param dataBytes    bytes read and written
 * @param zeroedBytes  bytes zeroed on the destination (holes punched or zeroes written)
 * @param skippedBytes zero bytes not touched because the destination already read as zeros
 * @param nanos        wall time
 */
public record CopyResult(long size, long dataBytes, long zeroedBytes, long skippedBytes, long nanos) {}

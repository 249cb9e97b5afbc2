package io.pagewise;

/**
 * I/O alignment of a file: what O_DIRECT needs for buffer addresses and for offsets and lengths
 * (from {@code statx(STATX_DIOALIGN)}, else the logical block size, else 4096), and the logical block size.
 *
 * @param memory           the alignment in bytes O_DIRECT needs for a buffer's address
 * @param offset           the alignment in bytes O_DIRECT needs for file offsets and lengths
 * @param logicalBlockSize the logical block size of the file's device in bytes
 */
public record Alignment(int memory, int offset, int logicalBlockSize) {}

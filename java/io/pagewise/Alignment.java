package io.pagewise;

/**
 * I/O alignment of a file: what O_DIRECT needs for buffer addresses and for offsets and lengths
 * (from {@code statx(STATX_DIOALIGN)}, else the logical block size, else 4096), and the logical block size.
 */
public record Alignment(int memory, int offset, int logicalBlockSize) {}

package io.pagewise.system;

/**
 * I/O alignment of a file: what O_DIRECT needs for buffer addresses ({@code memory}) and for offsets and lengths
 * ({@code offset}), and the logical block size of the device (for a file on no block device, such as tmpfs or NFS,
 * its {@code st_blksize}, at most 4096). The O_DIRECT figures come from {@code statx(STATX_DIOALIGN)} (Linux 6.1+);
 * where it reports nothing, both are the logical block size, which is what O_DIRECT checked before it.
 *
 * @param memory           the alignment in bytes O_DIRECT needs for a buffer's address
 * @param offset           the alignment in bytes O_DIRECT needs for file offsets and lengths
 * @param logicalBlockSize the logical block size of the file's device in bytes
 */
public record Alignment(int memory, int offset, int logicalBlockSize) {}

/**
 * Copying disks: files, block devices and NBD exports, sparse-aware and cache-friendly.
 *
 * <p>{@link io.pagewise.copy.Copier} copies one {@link io.pagewise.device.BlockDevice} to another as
 * {@link io.pagewise.copy.CopyOptions} say, without reading the source's holes and without writing zeros as data.
 * The devices are in {@code io.pagewise.backends}: files (through a {@link io.pagewise.StorageFile}, so a cache mode
 * applies), NBD exports, and the synthetic pattern, zero and null devices. {@link io.pagewise.copy.StreamCopier}
 * copies between a device and a stream that cannot seek (standard input or output, a pipe). This package does not
 * depend on the NBD server.
 */
package io.pagewise.copy;

/**
 * Copying disks: files, block devices and NBD exports, sparse-aware and cache-friendly.
 *
 * <p>{@link io.pagewise.copy.Copier} copies a {@link io.pagewise.copy.CopySource} to a
 * {@link io.pagewise.copy.CopyDestination} as {@link io.pagewise.copy.CopyOptions} say, without reading the
 * source's holes and without writing zeros as data. The endpoints are {@link io.pagewise.copy.FileEndpoint} (through
 * a {@link io.pagewise.StorageFile}, so a cache mode applies), {@link io.pagewise.copy.NbdEndpoint}, and the
 * synthetic ones of {@link io.pagewise.copy.SyntheticEndpoints}.
 */
package io.pagewise.copy;

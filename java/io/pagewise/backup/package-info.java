/**
 * Incremental backup of raw images: a persistent {@link io.pagewise.backup.DirtyBitmap} of what changed, recorded by
 * a {@link io.pagewise.filters.DirtyBitmapFilter} around any {@link io.pagewise.device.BlockDevice}, so that a backup
 * copies only the changed ranges; the NBD server offers it as {@code qemu:dirty-bitmap:NAME}. A copy is verified with
 * {@link io.pagewise.copy.BlockHash}.
 */
package io.pagewise.backup;

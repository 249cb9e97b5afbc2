/**
 * Backends, the block devices that hold the data (nbdkit's plugins), as against the contract in
 * {@link io.pagewise.device} and the filters that wrap them in {@link io.pagewise.filters}: {@link io.pagewise.backends.FileDevice} (a file or block device through a
 * {@link io.pagewise.StorageFile} and its cache mode), {@link io.pagewise.backends.MemoryDevice},
 * {@link io.pagewise.backends.SyntheticDevices} (pattern, zero and null) and {@link io.pagewise.backends.NbdDevice}
 * (an export of another NBD server). Each implements {@link io.pagewise.device.BlockDevice}, so the NBD server serves
 * it and the copier copies it.
 */
package io.pagewise.backends;

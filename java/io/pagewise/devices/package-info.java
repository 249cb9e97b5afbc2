/**
 * The block devices: {@link io.pagewise.devices.FileDevice} (a file or block device through a
 * {@link io.pagewise.StorageFile} and its cache mode), {@link io.pagewise.devices.MemoryDevice},
 * {@link io.pagewise.devices.SyntheticDevices} (pattern, zero and null) and {@link io.pagewise.devices.NbdDevice}
 * (an export of another NBD server). Each implements {@link io.pagewise.device.BlockDevice}, so the NBD server serves
 * it and the copier copies it.
 */
package io.pagewise.devices;

/**
 * The block-device contract: {@link io.pagewise.device.BlockDevice}, what the NBD server serves, the copier copies
 * and filters wrap; {@link io.pagewise.device.ZeroFlag}, how a zeroing may be done;
 * {@link io.pagewise.device.DeviceException}, a failure with an errno; and {@link io.pagewise.device.FilterDevice},
 * the base of a filter. The devices themselves (files, memory, synthetic, NBD) are in {@code io.pagewise.backends},
 * the filters in {@code io.pagewise.filters}. This package depends on neither the server nor the copier.
 */
package io.pagewise.device;

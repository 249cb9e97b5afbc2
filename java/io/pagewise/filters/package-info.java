/**
 * Filters: devices that wrap any {@link io.pagewise.device.BlockDevice} and change what it does, as nbdkit's filters
 * stack on any plugin. {@link io.pagewise.filters.ReadOnlyFilter} refuses changes;
 * {@link io.pagewise.filters.FaultFilter} fails and delays calls (nbdkit's error and delay filters).
 */
package io.pagewise.filters;

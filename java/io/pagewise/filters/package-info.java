/**
 * Filters: devices that wrap any {@link io.pagewise.device.BlockDevice} and change what it does, as nbdkit's filters
 * stack on any plugin: {@link io.pagewise.filters.CowFilter} (a copy-on-write overlay),
 * {@link io.pagewise.filters.FaultFilter} (fails and delays calls: nbdkit's error and delay filters),
 * {@link io.pagewise.filters.RateFilter} (a bandwidth limit), {@link io.pagewise.filters.ReadOnlyFilter} (refuses
 * changes), {@link io.pagewise.filters.StatsFilter} (counts), {@link io.pagewise.filters.BlockSizeFilter} (aligns
 * and splits), {@link io.pagewise.filters.NoExtentsFilter}, {@link io.pagewise.filters.NoZeroFilter} and
 * {@link io.pagewise.filters.DirtyBitmapFilter} (records changes in a {@link io.pagewise.backup.DirtyBitmap}).
 * {@link io.pagewise.filters.Filters} makes them from text, {@code NAME[:KEY=VALUE,…]}, in the order the command
 * line gives them.
 */
package io.pagewise.filters;

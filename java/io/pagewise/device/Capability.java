package io.pagewise.device;

/** One thing a {@link BlockDevice} can do; a device states the ones it has in its {@link Capabilities}. */
public enum Capability {
    /** {@link BlockDevice#write} takes writes; without it the device is read-only. */
    WRITE,
    /** {@link BlockDevice#flush()} does something worth asking for. */
    FLUSH,
    /** Writes, zeroes and trims may ask to be durable before they return (force unit access). */
    FUA,
    /** {@link BlockDevice#trim} releases space. */
    TRIM,
    /** {@link BlockDevice#zero} works. */
    ZERO,
    /** {@link BlockDevice#zero} with {@link ZeroFlag#FAST} can succeed. */
    FAST_ZERO,
    /** {@link BlockDevice#extents} tells holes from data. */
    EXTENTS,
    /** {@link BlockDevice#cache} does something. */
    CACHE,
    /** A flush or FUA through one user covers the writes made through every other. */
    MULTI_CONN,
    /**
     * Some range may read as a hole right now. Without it a reader need not look for holes, a lookup that costs
     * system calls on the hot path; a device that states {@link #EXTENTS} states it too unless it knows better.
     */
    HOLES,
    /**
     * The whole device is known to read as zeros as opened, such as a newly created sparse file: a copy to it may
     * skip zero runs.
     */
    STARTS_ZEROED
}

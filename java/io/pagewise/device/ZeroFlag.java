package io.pagewise.device;

import java.util.Collections;
import java.util.EnumSet;
import java.util.Set;

/** How {@link BlockDevice#zero} may make a range read as zeros. */
public enum ZeroFlag {
    /** The range may become a hole (deallocated); without it the zeros stay allocated. */
    MAY_TRIM,
    /** Fail with {@link DeviceException#ENOTSUP} rather than be as slow as writing the zeros. */
    FAST,
    /** The change is durable before the call returns (force unit access). */
    FUA;

    /** No flag: allocated zeros, however slow, durable at the next flush. */
    public static final Set<ZeroFlag> NONE = Collections.unmodifiableSet(EnumSet.noneOf(ZeroFlag.class));

    /** Only {@link #MAY_TRIM}: zeros, as a hole where the device can. */
    public static final Set<ZeroFlag> TRIM = Collections.unmodifiableSet(EnumSet.of(MAY_TRIM));

    private static final Set<ZeroFlag>[] SETS = sets();

    @SuppressWarnings("unchecked")
    private static Set<ZeroFlag>[] sets() {
        Set<ZeroFlag>[] sets = new Set[8];
        for (int bits = 0; bits < 8; bits++) {
            EnumSet<ZeroFlag> set = EnumSet.noneOf(ZeroFlag.class);
            for (ZeroFlag flag : values()) {
                if ((bits & (1 << flag.ordinal())) != 0) set.add(flag);
            }
            sets[bits] = Collections.unmodifiableSet(set);
        }
        return sets;
    }

    /**
     * {@return the shared unmodifiable set of the flags that are true}, without allocating
     *
     * @param mayTrim for {@link #MAY_TRIM}
     * @param fast    for {@link #FAST}
     * @param fua     for {@link #FUA}
     */
    public static Set<ZeroFlag> of(boolean mayTrim, boolean fast, boolean fua) {
        return SETS[(mayTrim ? 1 : 0) | (fast ? 2 : 0) | (fua ? 4 : 0)];
    }
}

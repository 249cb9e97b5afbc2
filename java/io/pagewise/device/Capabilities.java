package io.pagewise.device;

import java.util.Collections;
import java.util.EnumSet;
import java.util.Set;

/**
 * What a {@link BlockDevice} can do: an immutable set of {@link Capability}s. A device states its own; a filter takes
 * its device's and adds or removes what it changes ({@link #with}, {@link #without}), and the NBD server builds the
 * handshake's flags from it.
 */
public final class Capabilities {
    /** Nothing: a read-only device that is all data, as {@link BlockDevice#capabilities()} defaults to. */
    public static final Capabilities NONE;

    private static final Capability[] ALL = Capability.values();

    /** Every possible value, made once: a filter that changes its device's value on each call allocates nothing. */
    private static final Capabilities[] VALUES = new Capabilities[1 << ALL.length];

    static {
        for (int bits = 0; bits < VALUES.length; bits++) VALUES[bits] = new Capabilities(bits);
        NONE = VALUES[0];
    }

    /**
     * Writing and all that goes with it: {@link Capability#WRITE}, {@link Capability#FLUSH}, {@link Capability#FUA},
     * {@link Capability#TRIM}, {@link Capability#ZERO} and {@link Capability#FAST_ZERO}; what a device that does
     * them all states, and what a read-only filter takes away.
     */
    public static final Capabilities WRITES = of(Capability.WRITE, Capability.FLUSH, Capability.FUA, Capability.TRIM,
            Capability.ZERO, Capability.FAST_ZERO);

    private final int bits;

    private Capabilities(int bits) {
        this.bits = bits;
    }

    /**
     * {@return the capabilities named}
     *
     * @param capabilities what the device can do
     */
    public static Capabilities of(Capability... capabilities) {
        return NONE.with(capabilities);
    }

    /**
     * {@return the capabilities in a set}
     *
     * @param capabilities what the device can do
     */
    public static Capabilities of(Set<Capability> capabilities) {
        return of(capabilities.toArray(new Capability[0]));
    }

    /**
     * {@return true when the device can do it}
     *
     * @param capability what to ask about
     */
    public boolean has(Capability capability) {
        return (bits & bit(capability)) != 0;
    }

    /**
     * {@return these capabilities and the ones named}
     *
     * @param capabilities what to add
     */
    public Capabilities with(Capability... capabilities) {
        int added = bits;
        for (Capability capability : capabilities) added |= bit(capability);
        return added == bits ? this : VALUES[added];
    }

    /**
     * {@return these capabilities and those of other}
     *
     * @param other what to add
     */
    public Capabilities with(Capabilities other) {
        return (bits | other.bits) == bits ? this : VALUES[bits | other.bits];
    }

    /**
     * {@return these capabilities with capability added when present is true, and removed when it is false}, for a
     * capability that depends on a condition
     *
     * @param capability what to add or remove
     * @param present    whether the device has it
     */
    public Capabilities with(Capability capability, boolean present) {
        return present ? with(capability) : without(capability);
    }

    /**
     * {@return these capabilities without the ones named}
     *
     * @param capabilities what to remove
     */
    public Capabilities without(Capability... capabilities) {
        int kept = bits;
        for (Capability capability : capabilities) kept &= ~bit(capability);
        return kept == bits ? this : VALUES[kept];
    }

    /**
     * {@return these capabilities without those of other}
     *
     * @param other what to remove
     */
    public Capabilities without(Capabilities other) {
        return (bits & ~other.bits) == bits ? this : VALUES[bits & ~other.bits];
    }

    /** {@return the capabilities as an unmodifiable set} */
    public Set<Capability> asSet() {
        EnumSet<Capability> set = EnumSet.noneOf(Capability.class);
        for (Capability capability : ALL) {
            if (has(capability)) set.add(capability);
        }
        return Collections.unmodifiableSet(set);
    }

    private static int bit(Capability capability) {
        return 1 << capability.ordinal();
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof Capabilities && ((Capabilities) other).bits == bits;
    }

    @Override
    public int hashCode() {
        return bits;
    }

    /** {@return the capabilities in declaration order, such as {@code Capabilities[WRITE, FLUSH, EXTENTS]}} */
    @Override
    public String toString() {
        return "Capabilities" + asSet();
    }
}

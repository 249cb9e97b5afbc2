package io.pagewise.device;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.EnumSet;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The capabilities value: a set of what a device can do, that a filter adds to and takes from. */
@Timeout(30)
class CapabilitiesTest {
    @Test
    void aValueHasExactlyWhatItWasMadeWith() {
        Capabilities can = Capabilities.of(Capability.WRITE, Capability.EXTENTS);
        for (Capability capability : Capability.values()) {
            assertEquals(capability == Capability.WRITE || capability == Capability.EXTENTS, can.has(capability),
                    capability.name());
        }
        assertEquals(Set.of(Capability.WRITE, Capability.EXTENTS), can.asSet());
        assertEquals(can, Capabilities.of(EnumSet.of(Capability.EXTENTS, Capability.WRITE)));
        assertEquals(Set.of(), Capabilities.NONE.asSet());
        assertThrows(UnsupportedOperationException.class, () -> can.asSet().add(Capability.TRIM));
    }

    @Test
    void withAndWithoutMakeNewValuesAndLeaveTheOldOne() {
        Capabilities base = Capabilities.of(Capability.WRITE, Capability.ZERO, Capability.FAST_ZERO);
        Capabilities noFast = base.without(Capability.FAST_ZERO);
        assertTrue(base.has(Capability.FAST_ZERO), "the value is immutable");
        assertFalse(noFast.has(Capability.FAST_ZERO));
        assertEquals(Capabilities.of(Capability.WRITE, Capability.ZERO), noFast);
        assertEquals(base, noFast.with(Capability.FAST_ZERO));
        assertEquals(noFast, base.with(Capability.FAST_ZERO, false));
        assertEquals(base, noFast.with(Capability.FAST_ZERO, true));
        assertEquals(Capabilities.WRITES.with(Capability.HOLES),
                Capabilities.of(Capability.HOLES).with(Capabilities.WRITES));
        assertEquals(Capabilities.of(Capability.CACHE),
                Capabilities.WRITES.with(Capability.CACHE).without(Capabilities.WRITES));
        assertNotEquals(base, noFast);
    }

    /** The server asks for a device's value on every read, through every filter of a stack. */
    @Test
    void changingAValueAllocatesNothing() {
        Capabilities base = Capabilities.of(Capability.EXTENTS);
        assertSame(base.with(Capability.HOLES), base.with(Capability.HOLES));
        assertSame(Capabilities.WRITES.without(Capability.FAST_ZERO),
                Capabilities.WRITES.without(Capability.FAST_ZERO));
        assertSame(base, base.without(Capability.WRITE), "nothing to take away");
    }

    @Test
    void writesAreWritingAndAllThatGoesWithIt() {
        assertEquals(EnumSet.of(Capability.WRITE, Capability.FLUSH, Capability.FUA, Capability.TRIM, Capability.ZERO,
                Capability.FAST_ZERO), Capabilities.WRITES.asSet());
    }

    @Test
    void theTextNamesEachCapabilityInOrder() {
        assertEquals("Capabilities[WRITE, FLUSH, EXTENTS, STARTS_ZEROED]",
                Capabilities.of(Capability.STARTS_ZEROED, Capability.EXTENTS, Capability.FLUSH, Capability.WRITE)
                        .toString());
        assertEquals("Capabilities[]", Capabilities.NONE.toString());
    }
}

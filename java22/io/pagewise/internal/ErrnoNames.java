package io.pagewise.internal;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.util.Optional;

/**
 * The FFM version (JDK 22+) of the class that pairs with {@code native/errors.c}: the C library's name and text of
 * each errno number. Names come from strerrorname_np (glibc 2.32) where the C library has it, else from
 * {@link Errno}'s own table; texts from strerror_l in the C locale, untranslated whatever the JVM's locale.
 */
final class ErrnoNames {
    private static final int LC_MESSAGES_MASK = 1 << 5;
    private static final long MAX_TEXT = 1024;

    private static final Optional<MethodHandle> STRERRORNAME_NP = Ffm.optionalPlainFunction("strerrorname_np",
            FunctionDescriptor.of(ADDRESS, JAVA_INT));
    private static final MethodHandle STRERROR_L = Ffm.plainFunction("strerror_l",
            FunctionDescriptor.of(ADDRESS, JAVA_INT, ADDRESS));
    private static final MemorySegment C_LOCALE = cLocale();

    private ErrnoNames() {}

    private static MemorySegment cLocale() {
        MethodHandle newlocale = Ffm.plainFunction("newlocale", FunctionDescriptor.of(ADDRESS, JAVA_INT, ADDRESS,
                ADDRESS));
        try (java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofConfined()) {
            MemorySegment locale = (MemorySegment) newlocale.invokeExact(LC_MESSAGES_MASK, arena.allocateFrom("C"),
                    MemorySegment.NULL);
            if (locale.equals(MemorySegment.NULL)) throw new UnsatisfiedLinkError("newlocale(\"C\") failed");
            return locale; // kept for the JVM's lifetime
        } catch (Throwable e) {
            if (e instanceof Error error) throw error;
            throw Ffm.failed("newlocale", e);
        }
    }

    /** The symbolic name, such as {@code ENOSPC}, or null where Linux defines none or the C library cannot tell. */
    static String name(int errno) {
        if (STRERRORNAME_NP.isEmpty()) return Errno.builtInName(errno);
        try {
            return text((MemorySegment) STRERRORNAME_NP.get().invokeExact(errno));
        } catch (Throwable e) {
            throw Ffm.failed("strerrorname_np", e);
        }
    }

    /** The C library's text in the C locale, or null for a number without a name. */
    static String description(int errno) {
        if (name(errno) == null) return null;
        try {
            return text((MemorySegment) STRERROR_L.invokeExact(errno, C_LOCALE));
        } catch (Throwable e) {
            throw Ffm.failed("strerror_l", e);
        }
    }

    private static String text(MemorySegment string) {
        return string.equals(MemorySegment.NULL) ? null : string.reinterpret(MAX_TEXT).getString(0);
    }
}

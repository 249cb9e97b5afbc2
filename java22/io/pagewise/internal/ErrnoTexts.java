package io.pagewise.internal;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

/**
 * The FFM version (JDK 22+) of the class that pairs with {@code native/errno_texts.c}: the C library's text of an errno
 * number, from strerror_l in the C locale, untranslated whatever the JVM's locale.
 */
final class ErrnoTexts {
    private static final int LC_MESSAGES_MASK = 1 << 5;
    private static final long MAX_TEXT = 1024;

    private static final MethodHandle STRERROR_L = Ffm.plainFunction("strerror_l",
            FunctionDescriptor.of(ADDRESS, JAVA_INT, ADDRESS));
    private static final MemorySegment C_LOCALE = cLocale();

    private ErrnoTexts() {}

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

    /** The C library's text in the C locale. */
    static String description(int errno) {
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

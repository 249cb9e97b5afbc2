package io.pagewise.internal;

/**
 * Pairs with {@code native/errors.c}: the C library's name and text of each errno number, which {@link Errno} reads
 * once, when the native calls become available.
 */
final class ErrnoNames {
    private ErrnoNames() {}

    /** The symbolic name, such as {@code ENOSPC}, or null where Linux defines none. */
    static String name(int errno) {
        return name0(errno);
    }

    /** The C library's text in the C locale, or null for a number without a name. */
    static String description(int errno) {
        return description0(errno);
    }

    private static native String name0(int errno);

    private static native String description0(int errno);
}

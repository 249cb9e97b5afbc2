package io.pagewise.internal;

/**
 * Pairs with {@code native/errno_texts.c}: the C library's text of an errno number, which {@link Errno} reads once,
 * when the native calls become available.
 */
final class ErrnoTexts {
    private ErrnoTexts() {}

    /** The C library's text in the C locale. */
    static String description(int errno) {
        return description0(errno);
    }

    private static native String description0(int errno);
}

package io.pagewise;

import io.pagewise.internal.Advice;

/**
 * Advice about how data will be accessed, passed to {@code posix_fadvise}. NORMAL, SEQUENTIAL, RANDOM and
 * NOREUSE describe the whole file; WILLNEED and DONTNEED act on a range. Without the native library they do nothing.
 */
public enum AccessHint {
    /** No particular pattern, the kernel's default ({@code POSIX_FADV_NORMAL}). */
    NORMAL(Advice.NORMAL, false),
    /** The file will be read in order: the kernel reads further ahead ({@code POSIX_FADV_SEQUENTIAL}). */
    SEQUENTIAL(Advice.SEQUENTIAL, false),
    /** The file will be read in no order: the kernel stops reading ahead ({@code POSIX_FADV_RANDOM}). */
    RANDOM(Advice.RANDOM, false),
    /** The data will be used only once ({@code POSIX_FADV_NOREUSE}). */
    NOREUSE(Advice.NOREUSE, false),
    /** The range will be read soon: the kernel starts reading it into the page cache ({@code POSIX_FADV_WILLNEED}). */
    WILLNEED(Advice.WILLNEED, true),
    /**
     * The range is not needed any more: the kernel drops its clean pages from the page cache
     * ({@code POSIX_FADV_DONTNEED}); {@link StorageFile#evict} also writes dirty ones back first.
     */
    DONTNEED(Advice.DONTNEED, true);

    private final int nativeCode;
    private final boolean rangeHint;

    AccessHint(int nativeCode, boolean rangeHint) {
        this.nativeCode = nativeCode;
        this.rangeHint = rangeHint;
    }

    /** {@return true for WILLNEED and DONTNEED, which act on the range given, false for the whole-file hints} */
    public boolean isRangeHint() {
        return rangeHint;
    }

    int nativeCode() {
        return nativeCode;
    }
}

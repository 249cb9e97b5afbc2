package io.pagewise;

import io.pagewise.internal.Advice;

/**
 * Advice about how data will be accessed, passed to {@code posix_fadvise}. NORMAL, SEQUENTIAL, RANDOM and
 * NOREUSE describe the whole file; WILLNEED and DONTNEED act on a range. Without the native library they do nothing.
 */
public enum AccessHint {
    NORMAL(Advice.NORMAL, false),
    SEQUENTIAL(Advice.SEQUENTIAL, false),
    RANDOM(Advice.RANDOM, false),
    NOREUSE(Advice.NOREUSE, false),
    WILLNEED(Advice.WILLNEED, true),
    DONTNEED(Advice.DONTNEED, true);

    private final int nativeCode;
    private final boolean rangeHint;

    AccessHint(int nativeCode, boolean rangeHint) {
        this.nativeCode = nativeCode;
        this.rangeHint = rangeHint;
    }

    /** True for WILLNEED and DONTNEED, which act on the range given. */
    public boolean isRangeHint() {
        return rangeHint;
    }

    int nativeCode() {
        return nativeCode;
    }
}

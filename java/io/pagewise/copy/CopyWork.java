package io.pagewise.copy;

/**
 * A range to copy, or to zero, queued for a {@link CopyWorker}; tail: the copy's last piece, written to the end of its
 * block ({@link CopySetup#tailStart()}).
 */
record CopyWork(long offset, long length, boolean zero, boolean tail) {
    /** Tells a worker that no more work comes. */
    static final CopyWork END = new CopyWork(-1, 0, false, false);
}

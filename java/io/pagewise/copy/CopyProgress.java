package io.pagewise.copy;

/**
 * Told how far a copy has come. Called from the copy's worker threads, but one call at a time (the copy's workers
 * wait while it runs, so it must be quick), each with more done than the call before: progress never goes back,
 * however the workers' requests finish.
 */
@FunctionalInterface
public interface CopyProgress {
    /** Ignores progress. */
    CopyProgress NONE = (done, total) -> {};

    /**
     * Called as bytes are finished (written, zeroed or skipped), and with done == total at the end of a copy that
     * succeeded.
     *
     * @param done  bytes finished so far
     * @param total the bytes of the whole copy, or -1 while a copy from a stream ({@link StreamCopier}) does not
     *              know it yet
     */
    void progress(long done, long total);
}

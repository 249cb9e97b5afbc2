package io.pagewise.copy;

/** Told how far a copy has come; called from the copy's worker threads, so it must be thread-safe and quick. */
@FunctionalInterface
public interface CopyProgress {
    /** Ignores progress. */
    CopyProgress NONE = (done, total) -> {};

    /**
     * Called as bytes are finished (written, zeroed or skipped), and with done == total at the end.
     *
     * @param done  bytes finished so far
     * @param total the bytes of the whole copy
     */
    void progress(long done, long total);
}

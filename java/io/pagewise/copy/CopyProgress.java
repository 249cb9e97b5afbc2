package io.pagewise.copy;

/** Told how far a copy has come; called from the copy's worker threads, so it must be thread-safe and quick. */
@FunctionalInterface
public interface CopyProgress {
    CopyProgress NONE = (done, total) -> {};

    /** done of total bytes are finished (written, zeroed or skipped); called with done == total at the end. */
    void progress(long done, long total);
}

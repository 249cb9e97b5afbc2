package io.pagewise.copy;

/**
 * How {@link Copier} copies. Defaults: 16 requests in flight of 256 KiB each, all-zero 4 KiB blocks detected, holes
 * punched, no final flush.
 */
public final class CopyOptions {
    private int requests = 16;
    private int requestSize = 256 * 1024;
    private int sparseBlock = 4096;
    private boolean destinationIsZero;
    private boolean allocated;
    private boolean flush;
    private CopyProgress progress = CopyProgress.NONE;

    /** Requests in flight at once (each one a buffer of requestSize). */
    public CopyOptions requests(int requests) {
        if (requests < 1 || requests > 1024) throw new IllegalArgumentException("requests must be 1 to 1024: " + requests);
        this.requests = requests;
        return this;
    }

    /** The largest read or write; lowered to what the endpoints accept. */
    public CopyOptions requestSize(int bytes) {
        if (bytes < 512 || bytes > (64 << 20)) {
            throw new IllegalArgumentException("request size must be 512 bytes to 64 MiB: " + bytes);
        }
        this.requestSize = bytes;
        return this;
    }

    /** Data blocks of this size that are all zeros are not written but zeroed (or skipped); 0 turns it off. */
    public CopyOptions sparseBlock(int bytes) {
        if (bytes < 0 || (bytes != 0 && bytes < 512)) throw new IllegalArgumentException("sparse block must be 0 or at least 512: " + bytes);
        this.sparseBlock = bytes;
        return this;
    }

    /** The destination already reads as zeros: zero runs are skipped instead of zeroed (unless {@link #allocated}). */
    public CopyOptions destinationIsZero(boolean value) {
        this.destinationIsZero = value;
        return this;
    }

    /**
     * Zero runs are written as allocated zeros instead of holes, also on a destination that already reads as zeros
     * (a new file, {@link #destinationIsZero}): every byte of the copied range ends up allocated.
     */
    public CopyOptions allocated(boolean value) {
        this.allocated = value;
        return this;
    }

    /** Flush the destination once everything is written. */
    public CopyOptions flush(boolean value) {
        this.flush = value;
        return this;
    }

    public CopyOptions progress(CopyProgress listener) {
        this.progress = listener == null ? CopyProgress.NONE : listener;
        return this;
    }

    public int requests() { return requests; }

    public int requestSize() { return requestSize; }

    public int sparseBlock() { return sparseBlock; }

    public boolean destinationIsZero() { return destinationIsZero; }

    public boolean allocated() { return allocated; }

    public boolean flush() { return flush; }

    public CopyProgress progress() { return progress; }
}

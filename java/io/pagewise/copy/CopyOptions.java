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
    private BlockHash checksum;

    /** Options with the defaults listed for the class; the setters change them and return this. */
    public CopyOptions() {}

    /**
     * Requests in flight at once, each one with a buffer of {@link #requestSize()}.
     *
     * @param requests 1 to 1024
     * @return these options
     */
    public CopyOptions requests(int requests) {
        if (requests < 1 || requests > 1024) throw new IllegalArgumentException("requests must be 1 to 1024: " + requests);
        this.requests = requests;
        return this;
    }

    /**
     * The largest read or write; lowered to what the endpoints accept.
     *
     * @param bytes 512 bytes to 64 MiB
     * @return these options
     */
    public CopyOptions requestSize(int bytes) {
        if (bytes < 512 || bytes > (64 << 20)) {
            throw new IllegalArgumentException("request size must be 512 bytes to 64 MiB: " + bytes);
        }
        this.requestSize = bytes;
        return this;
    }

    /**
     * Data blocks of this size that are all zeros are not written but zeroed (or skipped). A copy between devices with a
     * larger minimum block size looks at whole blocks of theirs instead (the least common multiple of the two).
     *
     * @param bytes the block size, at least 512, or 0 to write every data block as it is
     * @return these options
     */
    public CopyOptions sparseBlock(int bytes) {
        if (bytes < 0 || (bytes != 0 && bytes < 512)) throw new IllegalArgumentException("sparse block must be 0 or at least 512: " + bytes);
        this.sparseBlock = bytes;
        return this;
    }

    /**
     * Says the destination already reads as zeros, so zero runs are skipped instead of zeroed (unless
     * {@link #allocated}).
     *
     * @param value true when it does
     * @return these options
     */
    public CopyOptions destinationIsZero(boolean value) {
        this.destinationIsZero = value;
        return this;
    }

    /**
     * Makes zero runs allocated zeros instead of holes, also on a destination that already reads as zeros (a new
     * file, {@link #destinationIsZero}): every byte of the copied range ends up allocated.
     *
     * @param value true for allocated zeros
     * @return these options
     */
    public CopyOptions allocated(boolean value) {
        this.allocated = value;
        return this;
    }

    /**
     * Flushes the destination once everything is written.
     *
     * @param value true to flush
     * @return these options
     */
    public CopyOptions flush(boolean value) {
        this.flush = value;
        return this;
    }

    /**
     * Where progress goes.
     *
     * @param listener told how far the copy has come, or null for nobody
     * @return these options
     */
    public CopyOptions progress(CopyProgress listener) {
        this.progress = listener == null ? CopyProgress.NONE : listener;
        return this;
    }

    /**
     * Computes the blkhash checksum of what is copied while copying, as {@code nbdcopy --blkhash} does: each worker
     * hashes the blocks it reads, and the source's holes are hashed without being read. {@link Copier#checksum()}
     * gives it once the copy has finished.
     *
     * @param hash the construction's digest and block size, or null for no checksum (the default)
     * @return these options
     */
    public CopyOptions checksum(BlockHash hash) {
        this.checksum = hash;
        return this;
    }

    /** {@return the checksum computed while copying, or null for none} */
    public BlockHash checksum() { return checksum; }

    /** {@return the requests in flight at once} */
    public int requests() { return requests; }

    /** {@return the largest read or write in bytes} */
    public int requestSize() { return requestSize; }

    /** {@return the block size of zero detection in bytes, or 0 when it is off} */
    public int sparseBlock() { return sparseBlock; }

    /** {@return true when the destination is said to read as zeros already} */
    public boolean destinationIsZero() { return destinationIsZero; }

    /** {@return true when zero runs become allocated zeros instead of holes} */
    public boolean allocated() { return allocated; }

    /** {@return true when the destination is flushed at the end} */
    public boolean flush() { return flush; }

    /** {@return where progress goes} */
    public CopyProgress progress() { return progress; }
}

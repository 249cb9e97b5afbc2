package io.pagewise;

/**
 * How a {@link StorageFile} uses the page cache.
 *
 * <table>
 * <caption>Modes</caption>
 * <tr><th>mode</th><th>behaviour</th><th>needs</th></tr>
 * <tr><td>WRITEBACK</td><td>buffered; {@code flush()} = fdatasync</td><td>any JVM</td></tr>
 * <tr><td>WRITETHROUGH</td><td>every write is durable before it returns</td><td>any JVM</td></tr>
 * <tr><td>UNSAFE</td><td>buffered; {@code flush()} and FUA do nothing (scratch data)</td><td>any JVM</td></tr>
 * <tr><td>DIRECT</td><td>O_DIRECT; unaligned requests go through aligned bounce buffers with read-modify-write
 *     at the edges</td><td>native library, a filesystem that supports O_DIRECT</td></tr>
 * <tr><td>DIRECTSYNC</td><td>DIRECT + O_DSYNC</td><td>as DIRECT</td></tr>
 * <tr><td>EVICT</td><td>buffered, and what it touched is evicted behind it in 2 MiB-aligned windows
 *     (written back first), leaving at most about 1 % resident</td><td>native library</td></tr>
 * <tr><td>DONTCACHE</td><td>RWF_DONTCACHE uncached buffered I/O for writes and for reads of whole 2 MiB windows
 *     (smaller reads are read as in EVICT, since the kernel drops a partly read large folio and the rest is read
 *     from disk again); falls back to EVICT where the file or kernel refuses it</td><td>native library; Linux 6.14 (XFS 6.15, ext4 6.17)</td></tr>
 * </table>
 */
public enum CacheMode {
    /** Buffered I/O; {@link StorageFile#flush()} is fdatasync and FUA writes use {@code RWF_DSYNC}. The default. */
    WRITEBACK(false),
    /** Buffered I/O where every write is durable before it returns. */
    WRITETHROUGH(false),
    /** Buffered I/O where flush and FUA do nothing: for scratch data that need not survive a crash. */
    UNSAFE(false),
    /** {@code O_DIRECT}: I/O bypasses the page cache; any offset, length and buffer works. */
    DIRECT(true),
    /** {@link #DIRECT} plus {@code O_DSYNC}: every write is durable before it returns. */
    DIRECTSYNC(true),
    /** Buffered I/O that evicts what it touched behind it, leaving at most about 1 % of it cached. */
    EVICT(true),
    /** {@code RWF_DONTCACHE} uncached buffered I/O, with EVICT's eviction as a safety net; falls back to EVICT. */
    DONTCACHE(true);

    private final boolean needsNative;

    CacheMode(boolean needsNative) {
        this.needsNative = needsNative;
    }

    /** {@return true when this mode cannot work without the native library} */
    public boolean needsNative() {
        return needsNative;
    }

    /** {@return true for DIRECT and DIRECTSYNC, which open the file with O_DIRECT} */
    public boolean isDirect() {
        return this == DIRECT || this == DIRECTSYNC;
    }
}

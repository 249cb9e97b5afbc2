package io.pagewise;

/**
 * How a {@link StorageFile} uses the page cache, and what each mode needs and does. The methods below are the one
 * description of the modes: {@link StorageFile}, the file device the NBD server and the copier use
 * ({@link io.pagewise.backends.FileDevice}) and the command line all ask them rather than deciding per mode.
 *
 * <table>
 * <caption>What each mode does</caption>
 * <tr><th>mode</th><th>page cache</th><th>flush and FUA</th><th>needs</th></tr>
 * <tr><td>WRITEBACK</td><td>keeps what it reads and writes</td><td>fdatasync, RWF_DSYNC</td><td>any JVM</td></tr>
 * <tr><td>WRITETHROUGH</td><td>keeps what it reads and writes</td><td>every write is durable before it returns</td>
 *     <td>any JVM</td></tr>
 * <tr><td>UNSAFE</td><td>keeps what it reads and writes</td><td>do nothing (scratch data)</td><td>any JVM</td></tr>
 * <tr><td>DIRECT</td><td>bypassed (O_DIRECT); unaligned requests go through aligned bounce buffers with
 *     read-modify-write at the edges</td><td>fdatasync, RWF_DSYNC</td>
 *     <td>native library, a filesystem that supports O_DIRECT</td></tr>
 * <tr><td>DIRECTSYNC</td><td>as DIRECT</td><td>every write is durable before it returns (O_DSYNC)</td>
 *     <td>as DIRECT</td></tr>
 * <tr><td>EVICT</td><td>buffered, and what it touched is evicted behind it in 2 MiB-aligned windows (written back
 *     first): while the file is open the 8 windows in use (16 MiB) and the readahead after them may stay cached,
 *     and after close at most about 1 % of what it touched; writes of 256 KiB or more in whole pages from aligned direct
 *     buffers go straight to the disk (O_DIRECT, where the file system takes it), never cached</td>
 *     <td>fdatasync, RWF_DSYNC</td><td>native library</td></tr>
 * <tr><td>DONTCACHE</td><td>RWF_DONTCACHE uncached buffered reads of whole 2 MiB windows (smaller ones are done
 *     as in EVICT, since the kernel drops a partly read large folio and the rest is read from disk again); writes
 *     as in EVICT (uncached writes had several times O_DIRECT's p99 latency under heavy writes); falls back to EVICT
 *     where the file or kernel refuses RWF_DONTCACHE</td><td>fdatasync, RWF_DSYNC</td>
 *     <td>native library; Linux 6.14 (XFS 6.15, ext4 6.17)</td></tr>
 * </table>
 *
 * <table>
 * <caption>The questions, answered per mode</caption>
 * <tr><th>mode</th><th>{@link #needsNative}</th><th>{@link #isDirect}</th><th>{@link #evictsBehind}</th>
 *     <th>{@link #prefetches}</th><th>{@link #flushSyncs}</th><th>{@link #syncsEveryWrite}</th></tr>
 * <tr><td>WRITEBACK</td><td>no</td><td>no</td><td>no</td><td>yes</td><td>yes</td><td>no</td></tr>
 * <tr><td>WRITETHROUGH</td><td>no</td><td>no</td><td>no</td><td>yes</td><td>yes</td><td>yes</td></tr>
 * <tr><td>UNSAFE</td><td>no</td><td>no</td><td>no</td><td>yes</td><td>no</td><td>no</td></tr>
 * <tr><td>DIRECT</td><td>yes</td><td>yes</td><td>no</td><td>no</td><td>yes</td><td>no</td></tr>
 * <tr><td>DIRECTSYNC</td><td>yes</td><td>yes</td><td>no</td><td>no</td><td>yes</td><td>yes</td></tr>
 * <tr><td>EVICT</td><td>yes</td><td>no</td><td>yes</td><td>yes</td><td>yes</td><td>no</td></tr>
 * <tr><td>DONTCACHE</td><td>yes</td><td>no</td><td>yes</td><td>no</td><td>yes</td><td>no</td></tr>
 * </table>
 */
public enum CacheMode {
    /** Buffered I/O; {@link StorageFile#flush()} is fdatasync and FUA writes use {@code RWF_DSYNC}. The default. */
    WRITEBACK(PageCacheUse.KEEPS, Durability.ON_FLUSH),
    /** Buffered I/O where every write is durable before it returns. */
    WRITETHROUGH(PageCacheUse.KEEPS, Durability.EVERY_WRITE),
    /** Buffered I/O where flush and FUA do nothing: for scratch data that need not survive a crash. */
    UNSAFE(PageCacheUse.KEEPS, Durability.NEVER),
    /** {@code O_DIRECT}: I/O bypasses the page cache; any offset, length and buffer works. */
    DIRECT(PageCacheUse.BYPASSES, Durability.ON_FLUSH),
    /** {@link #DIRECT} plus {@code O_DSYNC}: every write is durable before it returns. */
    DIRECTSYNC(PageCacheUse.BYPASSES, Durability.EVERY_WRITE),
    /**
     * Buffered I/O that evicts what it touched behind it, leaving at most about 1 % of it cached after close (while
     * open, up to the 16 MiB in use).
     */
    EVICT(PageCacheUse.EVICTS_BEHIND, Durability.ON_FLUSH),
    /** {@code RWF_DONTCACHE} uncached buffered I/O, with EVICT's eviction as a safety net; falls back to EVICT. */
    DONTCACHE(PageCacheUse.UNCACHED, Durability.ON_FLUSH);

    /** What a mode does with the page cache. */
    private enum PageCacheUse {
        /** Buffered: what is read or written stays cached, as with FileChannel. */
        KEEPS,
        /** Buffered, and dropped behind the access once out of use. */
        EVICTS_BEHIND,
        /** The kernel drops what each I/O brought in (RWF_DONTCACHE), with EVICTS_BEHIND as a safety net. */
        UNCACHED,
        /** O_DIRECT: data moves between the buffer and the device. */
        BYPASSES
    }

    /** When a write is on stable storage. */
    private enum Durability {
        /** After flush, or at once for a FUA write. */
        ON_FLUSH,
        /** Before the write returns. */
        EVERY_WRITE,
        /** Not before the kernel writes it back on its own: flush and FUA do nothing. */
        NEVER
    }

    private final PageCacheUse pageCache;
    private final Durability durability;

    CacheMode(PageCacheUse pageCache, Durability durability) {
        this.pageCache = pageCache;
        this.durability = durability;
    }

    /**
     * Whether this mode cannot work without the native library. The pure-Java path has {@code FileChannel} only,
     * which can do buffered I/O that keeps the page cache as it likes and nothing else.
     *
     * @return true for DIRECT, DIRECTSYNC, EVICT and DONTCACHE
     */
    public boolean needsNative() {
        return pageCache != PageCacheUse.KEEPS;
    }

    /**
     * Whether a file can be opened in this mode in this JVM: the mode needs nothing, or the native library is
     * loaded. DONTCACHE may still fall back to EVICT on a kernel or filesystem without {@code RWF_DONTCACHE}.
     *
     * @return true when {@link StorageFile#open(java.nio.file.Path, CacheMode, java.nio.file.OpenOption...)}
     *         accepts this mode here
     */
    public boolean isAvailable() {
        return !needsNative() || Native.isAvailable();
    }

    /**
     * Whether the file is opened with {@code O_DIRECT}, so I/O bypasses the page cache. Requests whose offset and
     * length are multiples of {@link StorageFile#requestAlignment()}, from a suitably aligned direct buffer, go
     * straight to the device, others through bounce buffers: the NBD server advertises that alignment as its
     * minimum block size and the copier aligns its requests to it.
     *
     * @return true for DIRECT and DIRECTSYNC
     */
    public boolean isDirect() {
        return pageCache == PageCacheUse.BYPASSES;
    }

    /**
     * Whether this mode does buffered I/O and then drops what it touched, leaving the page cache as it found it
     * (at most about 1 % of what it touched stays after close, and up to the 16 MiB in use while open; pages cached
     * before the file was opened are left alone).
     *
     * @return true for EVICT and DONTCACHE
     */
    public boolean evictsBehind() {
        return pageCache == PageCacheUse.EVICTS_BEHIND || pageCache == PageCacheUse.UNCACHED;
    }

    /**
     * Whether {@link StorageFile#prefetch} (and so NBD {@code CACHE}) reads into the page cache in this mode. Not in
     * the modes that keep data out of it; EVICT prefetches and evicts the range behind later reads. The pure-Java
     * path cannot prefetch at all: {@link StorageFile#canPrefetch()} answers for an open file.
     *
     * @return true for WRITEBACK, WRITETHROUGH, UNSAFE and EVICT
     */
    public boolean prefetches() {
        return pageCache == PageCacheUse.KEEPS || pageCache == PageCacheUse.EVICTS_BEHIND;
    }

    /**
     * Whether {@link StorageFile#flush()} and FUA writes make data durable (fdatasync, {@code RWF_DSYNC}). The NBD
     * server advertises FLUSH and FUA for every writable export, also under UNSAFE, where they do nothing (as
     * qemu-nbd's {@code cache=unsafe} does).
     *
     * @return false for UNSAFE only
     */
    public boolean flushSyncs() {
        return durability != Durability.NEVER;
    }

    /**
     * Whether every write is durable before it returns, as if each were a FUA write.
     *
     * @return true for WRITETHROUGH and DIRECTSYNC
     */
    public boolean syncsEveryWrite() {
        return durability == Durability.EVERY_WRITE;
    }
}

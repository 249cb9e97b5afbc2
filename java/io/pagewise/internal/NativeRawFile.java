package io.pagewise.internal;

import io.pagewise.system.Alignment;
import io.pagewise.system.NativeIOException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * An open file descriptor, owned: the only holder of it, the only caller of the JNI calls on it, and the one that
 * closes it, once. Not guarded against I/O racing with close: StorageFile does that.
 */
public final class NativeRawFile implements RawFile {
    private final Path path;
    private final int fd;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final IoCounters counters;
    private final boolean blockDevice;
    private final boolean cached;
    private final Alignment alignment;
    private final long deviceMajor;
    private final long deviceMinor;
    /** Whether a write submitted by io_submit is as durable as a synchronous one here: see {@link #asyncWritesDurable}. */
    private final boolean asyncWritesDurable;
    /** Whether an O_DIRECT write here leaves nothing in the page cache: see {@link #directWritesBypassCache()}. */
    private final boolean directBypassesCache;
    /** Read from sysfs on first use (only EVICT needs it); 0 until then. */
    private volatile long readaheadBytes;

    private NativeRawFile(Path path, int fd, boolean blockDevice, boolean cached, Alignment alignment,
                          long deviceMajor, long deviceMinor, long fileSystemType, boolean directReported,
                          IoCounters counters) {
        this.path = path;
        this.counters = counters;
        this.directBypassesCache = blockDevice || (directReported
                && (fileSystemType == EXT4_SUPER_MAGIC || fileSystemType == XFS_SUPER_MAGIC));
        this.asyncWritesDurable = !blockDevice && asyncWritesDurable(fileSystemType);
        this.fd = fd;
        this.blockDevice = blockDevice;
        this.cached = cached;
        this.alignment = alignment;
        this.deviceMajor = deviceMajor;
        this.deviceMinor = deviceMinor;
    }

    /** @param flags {@link FileDescriptors} open flags */
    public static NativeRawFile open(Path path, int flags) throws IOException {
        return open(path, path, flags, new IoCounters());
    }

    /** The identity of the open file itself (through /proc/self/fd), not of whatever its path names now. */
    @Override
    public Object identity() {
        return RawFile.fileKey(Path.of("/proc/self/fd/" + fd));
    }

    /**
     * A second descriptor of this same open file (by /proc/self/fd, so a rename or unlink since does not matter),
     * with other open flags; its errors name this file's path and it counts into this file's {@link #counters()}. The
     * caller owns and closes it.
     *
     * @param flags {@link FileDescriptors} open flags, without CREATE, EXCLUSIVE or TRUNCATE
     */
    public NativeRawFile reopen(int flags) throws IOException {
        if ((flags & (FileDescriptors.CREATE | FileDescriptors.EXCLUSIVE | FileDescriptors.TRUNCATE)) != 0) {
            throw new IllegalArgumentException("reopen takes no CREATE, EXCLUSIVE or TRUNCATE");
        }
        return open(Path.of("/proc/self/fd/" + fd), path, flags, counters);
    }

    private static NativeRawFile open(Path openAt, Path path, int flags, IoCounters counters) throws IOException {
        int fd = FileDescriptors.open(openAt, flags);
        if (fd < 0) {
            String operation = (flags & FileDescriptors.DIRECT) != 0 ? "open (O_DIRECT)" : "open";
            if (fd == -Errno.EINVAL && (flags & FileDescriptors.DIRECT) != 0) {
                operation = "open (O_DIRECT, which this filesystem or file does not support)";
            }
            throw Errno.openFailure(fd, operation, path);
        }
        try {
            long[] stat = new long[FileDescriptors.STAT_FIELDS];
            Errno.check(FileDescriptors.stat(fd, stat), "fstat", path);
            int[] direct = new int[2];
            Errno.check(FileDescriptors.directAlignment(fd, direct), "statx", path);
            long fileSystemType = FileDescriptors.fileSystemType(fd);
            Errno.check(fileSystemType, "fstatfs", path);
            return new NativeRawFile(path, fd, stat[1] == FileDescriptors.TYPE_BLOCK_DEVICE,
                    stat[1] != FileDescriptors.TYPE_OTHER, alignment(direct, stat), stat[4], stat[5], fileSystemType,
                    direct[0] > 0, counters);
        } catch (IOException | RuntimeException e) {
            FileDescriptors.close(fd);
            throw e;
        }
    }

    static final long EXT4_SUPER_MAGIC = 0xEF53L; // ext2 and ext3 too, which the ext4 driver serves today
    static final long XFS_SUPER_MAGIC = 0x58465342L;
    static final long BTRFS_SUPER_MAGIC = 0x9123683EL;

    /**
     * Whether an O_DIRECT write with RWF_DSYNC or on an O_DSYNC descriptor is durable when its io_submit completion
     * arrives, on the file system with this statfs magic. ext4, XFS and btrfs do direct I/O through iomap, whose
     * completion of such a write (iomap_dio_complete) runs generic_write_sync unless every block went out with FUA;
     * so the completion comes after the sync, whether the write was submitted or synchronous. Elsewhere it may not:
     * FUSE, for one, completes a submitted direct write without the sync it does for a synchronous one, and LazyFS
     * loses every such write at a power cut. There a write goes by pwritev2, whose return waits for the sync
     * everywhere. Block devices gain nothing from AIO (no inode lock to hold), so they write synchronously too.
     */
    public static boolean asyncWritesDurable(long fileSystemType) {
        return fileSystemType == EXT4_SUPER_MAGIC || fileSystemType == XFS_SUPER_MAGIC
                || fileSystemType == BTRFS_SUPER_MAGIC;
    }

    /**
     * Whether an O_DIRECT write to this file leaves nothing in the page cache: a block device, or a file on ext4 or
     * XFS whose direct I/O alignment statx reported. ext4 reports none for a file it writes through the page cache
     * even under O_DIRECT (data=journal, inline data, fs-verity, encryption without direct I/O support); btrfs caches
     * the writes of files with data checksums; other file systems are not known to bypass it.
     */
    public boolean directWritesBypassCache() {
        return directBypassesCache;
    }

    /** Whether {@link RawFile#AIO} is taken on this file (else such writes go by pwritev2). */
    public boolean takesAio() {
        return asyncWritesDurable;
    }

    /** The open flags the kernel holds for this descriptor, as {@link FileDescriptors} READ_WRITE, DIRECT and DSYNC bits. */
    public int kernelOpenFlags() throws IOException {
        int flags = FileDescriptors.statusFlags(fd);
        Errno.check(flags, "fcntl (F_GETFL)", path);
        return flags;
    }

    /**
     * O_DIRECT alignment and logical block size from statx(STATX_DIOALIGN) (direct, zeros when not reported) and
     * fstat (stat). Without STATX_DIOALIGN (Linux before 6.1, some file systems) O_DIRECT needs what those kernels
     * checked: the logical block size of the block device, that is BLKSSZGET for a block device and the one of the
     * device holding a regular file (sysfs). A file on no block device (tmpfs, NFS, FUSE, btrfs's anonymous
     * device) gets its st_blksize, at most a page, which keeps bounce buffers possible.
     */
    static Alignment alignment(int[] direct, long[] stat) {
        int logical;
        if (stat[1] == FileDescriptors.TYPE_BLOCK_DEVICE) {
            logical = (int) stat[2];
        } else {
            long fromDevice = sysfsNumber(stat[4], stat[5], "logical_block_size");
            logical = fromDevice > 0 ? (int) fromDevice : (int) Math.max(512, Math.min(stat[2], BufferPool.ALIGNMENT));
        }
        return direct[1] > 0 ? new Alignment(direct[0], direct[1], logical) : new Alignment(logical, logical, logical);
    }

    /** The device's read_ahead_kb from sysfs (the disk's, for a partition), or the default when unknown. */
    private static long readaheadBytes(long major, long minor) {
        long kib = sysfsNumber(major, minor, "read_ahead_kb");
        if (kib >= 0) return kib * 1024;
        try {
            return Long.parseLong(Files.readString(Path.of("/sys/class/bdi/" + major + ":" + minor + "/read_ahead_kb"))
                    .trim()) * 1024;
        } catch (IOException | NumberFormatException | SecurityException e) {
            return DEFAULT_READAHEAD;
        }
    }

    /** A number from the block device's queue/ in sysfs (the whole disk's, for a partition), or -1 when unknown. */
    private static long sysfsNumber(long major, long minor, String name) {
        SysfsKey key = new SysfsKey(major, minor, name);
        long now = System.nanoTime();
        SysfsValue known = SYSFS.get(key);
        if (known != null && now - known.readAt() < SYSFS_FRESH_NANOS) return known.value();
        long value = readSysfsNumber(major, minor, name);
        SYSFS.put(key, new SysfsValue(value, now));
        return value;
    }

    /** Kept out of sysfsNumber, which every open calls, so that compiling that does not compile this too. */
    private static long readSysfsNumber(long major, long minor, String name) {
        Path device = Path.of("/sys/dev/block/" + major + ":" + minor);
        for (Path candidate : new Path[] {device.resolve("queue").resolve(name), device.resolve("../queue").resolve(name)}) {
            try {
                return Long.parseLong(Files.readString(candidate).trim());
            } catch (IOException | NumberFormatException | SecurityException e) {
                // try the next place
            }
        }
        return -1;
    }

    /**
     * sysfs numbers read in the last second, by device and name: a merge opens hundreds of files on one device at
     * once, and each open read the device's logical block size again (three system calls, and a path built twice).
     * A second bounds how long a changed setting (read_ahead_kb, a loop device set up again) goes unseen.
     */
    private static final java.util.concurrent.ConcurrentHashMap<SysfsKey, SysfsValue> SYSFS =
            new java.util.concurrent.ConcurrentHashMap<>();
    private static final long SYSFS_FRESH_NANOS = 1_000_000_000L;

    private record SysfsKey(long major, long minor, String name) {}

    private record SysfsValue(long value, long readAt) {}

    @Override
    public long readaheadBytes() {
        long bytes = readaheadBytes;
        if (bytes == 0) readaheadBytes = bytes = readaheadBytes(deviceMajor, deviceMinor);
        return bytes;
    }

    @Override public Path path() { return path; }

    @Override public boolean isNative() { return true; }

    @Override public int descriptor() { return fd; }

    @Override public boolean isBlockDevice() { return blockDevice; }

    @Override public boolean usesPageCache() { return cached; }

    @Override public Alignment alignment() { return alignment; }

    @Override
    public long read(IoVector request, int flags) throws IOException {
        return transfer(request, flags, false);
    }

    @Override
    public void write(IoVector request, int flags) throws IOException {
        if (!asyncWritesDurable) flags &= ~AIO; // see asyncWritesDurable(): a synchronous write is durable everywhere
        transfer(request, flags, true);
    }

    /**
     * Direct buffers go to the kernel as they are: for one buffer, the common small request, nothing is allocated
     * unless a flag is to be counted (StorageFile's one-buffer calls pass their thread's own request, see
     * {@link IoVector}). Heap buffers are bounced. A branch on {@code write}, not a lambda or an interface: read and
     * write inline this, and each folds the branch away.
     */
    private long transfer(IoVector request, int flags, boolean write) throws IOException {
        long[] asked = askedFor(flags);
        long n;
        if (request.isDirect()) {
            n = write ? PositionalIo.write(fd, request, flags, asked) : PositionalIo.read(fd, request, flags, asked);
            if (n < 0) throw failure(n, write ? "pwritev" : "preadv", flags, request.offset(), request.length());
        } else {
            ByteBuffer one = request.single();
            ByteBuffer[] many = one == null ? request.buffers() : null;
            n = bounced(one, many, request.offset(), request.length(), flags, asked, write);
        }
        if (asked != null) counters.asked(asked, write);
        return n;
    }

    /**
     * Heap buffers cannot be handed to the kernel: through a direct buffer, one bounce buffer at a time. Takes the
     * request's parts (one buffer, or else the buffers), not the request: a method this large is not inlined, and the
     * request passed to it would have to be allocated for every small heap-buffer transfer. A read stops at end of
     * file; returns the bytes transferred.
     */
    private long bounced(ByteBuffer one, ByteBuffer[] many, long offset, long length, int flags, long[] asked,
                         boolean write) throws IOException {
        boolean small = length <= BufferPool.SMALL_SIZE;
        ByteBuffer bounce = small ? BufferPool.small() : BufferPool.shared().take();
        long[] chunkAsked = askedFor(flags);
        try {
            long done = 0;
            while (done < length) {
                int chunk = (int) Math.min(length - done, bounce.capacity());
                bounce.clear().limit(chunk);
                if (write && one != null) {
                    bounce.put(0, one, one.position(), chunk);
                    one.position(one.position() + chunk);
                } else if (write) {
                    Buffers.gather(many, bounce, 0, chunk);
                }
                long at = offset + done;
                int n = (int) PositionalIo.bounced(fd, bounce, at, flags, write, chunkAsked);
                if (n < 0) throw failure(n, write ? "pwritev" : "preadv", flags, at, chunk);
                if (asked != null) add(asked, chunkAsked);
                if (write) {
                    done += chunk;
                } else {
                    if (one != null) one.put(bounce.flip()); else Buffers.scatter(bounce.flip(), many);
                    done += n;
                    if (n < chunk) break;
                }
            }
            return done;
        } finally {
            if (!small) BufferPool.shared().give(bounce);
        }
    }

    /**
     * Where C reports what a call asked of the kernel: only calls with a flag to count (a plain read or write,
     * the hot path of the buffered modes, asks for nothing counted and allocates nothing).
     */
    private static long[] askedFor(int flags) {
        return (flags & (DONTCACHE | DSYNC | AIO)) != 0 ? new long[PositionalIo.ASKED_FIELDS] : null;
    }

    private static void add(long[] total, long[] part) {
        for (int i = 0; i < total.length; i++) total[i] += part[i];
    }

    /**
     * The exception for a read or write that failed with -errno: the operation's name is built here, on failure
     * only, not on every call.
     */
    private NativeIOException failure(long negativeErrno, String base, int flags, long offset, long length) {
        return Errno.exception(negativeErrno, operation(base, flags), path, offset, length);
    }

    /** The syscall as C makes it: preadv/pwritev, or preadv2/pwritev2 with the RWF_ flags, or either by io_submit. */
    private static String operation(String base, int flags) {
        String via = (flags & AIO) != 0 ? " by io_submit" : "";
        if ((flags & (DONTCACHE | DSYNC)) == 0) return base + via;
        if ((flags & DONTCACHE) != 0 && (flags & DSYNC) != 0) return base + "2 (RWF_DONTCACHE|RWF_DSYNC)" + via;
        return base + "2" + ((flags & DONTCACHE) != 0 ? " (RWF_DONTCACHE)" : " (RWF_DSYNC)") + via;
    }

    @Override public IoCounters counters() { return counters; }

    @Override
    public void dataSync() throws IOException {
        Errno.check(Advice.fdatasync(fd), "fdatasync", path);
        counters.synced();
    }

    @Override
    public void advise(long offset, long length, int advice) throws IOException {
        Errno.check(Advice.fadvise(fd, offset, length, advice), "posix_fadvise", path, offset, length);
    }

    @Override
    public void syncRange(long offset, long length, int flags) throws IOException {
        Errno.check(Advice.syncFileRange(fd, offset, length, flags), "sync_file_range", path, offset, length);
    }

    @Override
    public long size() throws IOException {
        long[] stat = new long[FileDescriptors.STAT_FIELDS];
        Errno.check(FileDescriptors.stat(fd, stat), "fstat", path);
        return stat[0];
    }

    @Override
    public void truncate(long size) throws IOException {
        Errno.check(FileDescriptors.ftruncate(fd, size), "ftruncate", path, size, 0);
    }

    @Override
    public boolean fallocate(int mode, long offset, long length) throws IOException {
        int rc = Space.fallocate(fd, mode, offset, length);
        if (rc == -Errno.EOPNOTSUPP || rc == -Errno.ENOSYS) return false;
        String operation = mode == Space.PUNCH_HOLE ? "fallocate (PUNCH_HOLE)"
                : mode == Space.ZERO_RANGE ? "fallocate (ZERO_RANGE)" : "fallocate";
        Errno.check(rc, operation, path, offset, length);
        return true;
    }

    @Override
    public long seek(long offset, int whence) throws IOException {
        long rc = Space.seek(fd, offset, whence);
        if (rc == -Errno.ENXIO) return -1;
        return Errno.check(rc, whence == Space.SEEK_DATA ? "lseek (SEEK_DATA)" : "lseek (SEEK_HOLE)", path, offset, 0);
    }

    @Override
    public byte[] residentBitmap(long offset, long length) throws IOException {
        int pageSize = Mincore.pageSize();
        long pages = (length + pageSize - 1) / pageSize;
        if (pages > Integer.MAX_VALUE * 8L - 64) throw new IllegalArgumentException("range too large: " + length);
        byte[] bits = new byte[(int) ((pages + 7) / 8)];
        int rc = Mincore.residentBitmap(fd, offset, length, bits);
        if (rc == -Errno.EACCES || rc == -Errno.ENODEV) return null; // write-only or unmappable file
        Errno.check(rc, "mincore", path, offset, length);
        return bits;
    }

    @Override
    public long cachedPages(long offset, long length) throws IOException {
        long pages = Mincore.cachedPages(fd, offset, length);
        if (pages == -Errno.ENOSYS || pages == -Errno.EPERM || pages == -Errno.EOPNOTSUPP) return -1;
        return Errno.check(pages, "cachestat", path, offset, length);
    }

    /**
     * {@return the page-cache state of the whole file from cachestat: cached, dirty, under writeback, evicted,
     * recently evicted pages}, or null where the kernel has no cachestat (before Linux 6.5) or does not tell
     */
    public long[] cacheStat() throws IOException {
        long[] out = new long[5];
        int rc = Mincore.cacheStat(fd, 0, 0, out);
        if (rc == -Errno.ENOSYS || rc == -Errno.EPERM || rc == -Errno.EOPNOTSUPP) return null;
        Errno.check(rc, "cachestat", path, 0, 0);
        return out;
    }

    @Override
    public long residentPages(long offset, long length) throws IOException {
        long cached = cachedPages(offset, length);
        if (cached >= 0) return cached;
        return Errno.check(Mincore.residentPages(fd, offset, length), "mincore", path, offset, length);
    }

    @Override
    public void close() throws IOException {
        if (!closed.compareAndSet(false, true)) return; // a second close could hit a descriptor reused since
        Errno.check(FileDescriptors.close(fd), "close", path);
    }
}

package io.pagewise.backends;

import io.pagewise.CacheMode;
import io.pagewise.Extent;
import io.pagewise.StorageFile;
import io.pagewise.device.BlockDevice;
import io.pagewise.device.Capabilities;
import io.pagewise.device.Capability;
import io.pagewise.device.DeviceException;
import io.pagewise.device.ZeroFlag;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A file or block device through a {@link StorageFile}, so that its {@link CacheMode} applies to every request.
 * Every user shares the one StorageFile, and a flush is an fdatasync of the whole file, so the device is
 * {@linkplain Capability#MULTI_CONN multi-conn}. The size is the file's when the device was made; a file that shrinks
 * afterwards reads as zeros past its new end.
 *
 * <p>A device that opened its file for writing ({@link #open} with WRITE, {@link #create}, {@link #openOrCreate})
 * is taken to be the file's one writer, as an NBD export is: it keeps the data and hole runs it has learned of the
 * file, and forgets those near each range it writes, zeroes or trims, so a read of a sparse file (an NBD READ that
 * sends holes as holes) asks the file nothing but the read itself. The writable devices of one file in this process
 * share what they learned, and each forgets what any of them changes. Data that another program writes into a hole
 * meanwhile may read as zeros through the device, as it may through an nbdkit or qemu-nbd export whose file someone
 * else writes. A read-only device, or one made {@link #of} a file its caller keeps, asks the file every time.
 *
 * <pre>{@code
 * try (FileDevice disk = FileDevice.open(path, CacheMode.EVICT, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
 *     disk.write(buffer, 0, true);   // durable when it returns
 * }
 * }</pre>
 */
public final class FileDevice implements BlockDevice {
    private final StorageFile file;
    private final boolean ownsFile;
    private final boolean created;
    private final long size;
    /** What the device can do while it has no hole, and once it may have one. */
    private final Capabilities solid;
    private final Capabilities holed;
    /** Whether any hole may exist; a fully allocated file stays hole-free until a trim or zeroing punches one. */
    private volatile boolean holes;
    /**
     * The runs learned of the file, shared with the process's other writable devices of it; null for a read-only
     * device. A device over a file the caller keeps only forgets in it what it changes: it never learns there, as the
     * file it was given may not be the one its path names now.
     */
    private final ExtentMap known;
    private final AtomicBoolean closed = new AtomicBoolean();

    private FileDevice(StorageFile file, boolean ownsFile, boolean created, Object identity) throws IOException {
        this.file = file;
        this.ownsFile = ownsFile;
        this.created = created;
        this.size = file.size();
        this.solid = capabilities(file, created);
        this.holed = solid.with(Capability.HOLES);
        this.holes = solid.has(Capability.EXTENTS) && hasHole(file, size);
        this.known = identity != null && file.isWritable() && solid.has(Capability.EXTENTS)
                ? ExtentMap.shared(identity) : null;
    }

    /**
     * Writing where the file was opened for it. Fast zeroing and the map of holes where the native calls reach a
     * regular file: fallocate zeroes or punches one in constant time on the file systems Linux commonly uses. NBD
     * CACHE only where prefetching fills the page cache ({@link CacheMode#prefetches()}).
     */
    private static Capabilities capabilities(StorageFile file, boolean created) {
        boolean mapped = file.isNative() && !file.isBlockDevice();
        Capabilities writes = file.isWritable()
                ? Capabilities.WRITES.with(Capability.FAST_ZERO, mapped) : Capabilities.NONE;
        return writes.with(Capability.MULTI_CONN)
                .with(Capability.EXTENTS, mapped)
                .with(Capability.CACHE, file.canPrefetch())
                .with(Capability.STARTS_ZEROED, created);
    }

    /** The first two runs tell: a hole, or data up to the first hole, or data to the end. */
    private static boolean hasHole(StorageFile file, long size) throws IOException {
        for (Extent extent : file.extents(0, size, 2)) {
            if (extent.hole()) return true;
        }
        return false;
    }

    /**
     * A device over an open file; the caller keeps it (closing the device leaves it open).
     *
     * @param file the file; the device is writable when the file was opened with WRITE
     * @return the device
     * @throws IOException when the file's size or allocation map cannot be read
     */
    public static FileDevice of(StorageFile file) throws IOException {
        return new FileDevice(file, false, false, identity(file.path()));
    }

    /**
     * Opens an existing file or block device as {@link StorageFile#open(Path, CacheMode, OpenOption...)} does:
     * read-only unless options include {@link StandardOpenOption#WRITE}. Closing the device closes the file.
     *
     * @param path    the file or block device
     * @param mode    how it uses the page cache
     * @param options READ, WRITE and the other options StorageFile takes; none means READ
     * @return the device
     * @throws java.nio.file.NoSuchFileException when path does not exist
     * @throws io.pagewise.system.NativeIOException when path is a directory, a pipe or a socket (EISDIR, ESPIPE, ENXIO)
     * @throws IOException when path cannot be opened otherwise
     * @throws UnsupportedOperationException when the mode needs the native library and it is not loaded
     */
    public static FileDevice open(Path path, CacheMode mode, OpenOption... options) throws IOException {
        Object before = identity(path);
        StorageFile file = StorageFile.open(path, mode, options.length == 0 ? new OpenOption[] {StandardOpenOption.READ}
                : options);
        Object after = identity(path);
        return owning(file, false, path, before != null && before.equals(after) ? after : null);
    }

    /**
     * Creates a new sparse file of size bytes, read-write; it {@linkplain Capability#STARTS_ZEROED starts zeroed}, so a
     * copy to it skips zero runs. Closing the device closes the file.
     *
     * @param path where to create it; nothing may be there yet
     * @param mode how it uses the page cache
     * @param size its size in bytes
     * @return the device
     * @throws java.nio.file.FileAlreadyExistsException when path exists
     * @throws IOException when the file cannot be created or sized (it is removed then)
     */
    public static FileDevice create(Path path, CacheMode mode, long size) throws IOException {
        StorageFile file = StorageFile.open(path, mode, StandardOpenOption.READ, StandardOpenOption.WRITE,
                StandardOpenOption.CREATE_NEW);
        try {
            file.resize(size);
        } catch (IOException | RuntimeException e) {
            file.close();
            Files.deleteIfExists(path);
            throw e;
        }
        return owning(file, true, path, identity(path));
    }

    /**
     * Opens a file read-write, or creates it as {@link #create} does when nothing is there: a copy's destination.
     *
     * @param path       the file or block device
     * @param mode       how it uses the page cache
     * @param createSize the size of a file that has to be created, in bytes
     * @return the device; {@link #created()} says which happened
     * @throws io.pagewise.system.NativeIOException when path is a directory, a pipe or a socket (EISDIR, ESPIPE, ENXIO)
     * @throws IOException when path cannot be opened otherwise or created
     */
    public static FileDevice openOrCreate(Path path, CacheMode mode, long createSize) throws IOException {
        return Files.exists(path) ? open(path, mode, StandardOpenOption.READ, StandardOpenOption.WRITE)
                : create(path, mode, createSize);
    }

    /**
     * The file's device and inode, or null when they cannot be read. For a file just opened, read before and after:
     * when both agree, the path named the opened file all along (it was not replaced in between).
     */
    private static Object identity(Path path) {
        try {
            return Files.readAttributes(path, BasicFileAttributes.class).fileKey();
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    private static FileDevice owning(StorageFile file, boolean created, Path path, Object identity) throws IOException {
        try {
            return new FileDevice(file, true, created, identity);
        } catch (IOException | RuntimeException e) {
            file.close();
            if (created) Files.deleteIfExists(path);
            throw e;
        }
    }

    /** {@return the file this device reads and writes} */
    public StorageFile file() { return file; }

    /** {@return true when {@link #create} made the file}, so that a failed copy can remove what it left */
    public boolean created() { return created; }

    @Override
    public String name() { return file.path().toString(); }

    @Override
    public long size() { return size; }

    @Override
    public void readFully(ByteBuffer dst, long offset) throws IOException {
        readFully(new ByteBuffer[] {dst}, offset);
    }

    /**
     * One {@link StorageFile#readFully(ByteBuffer[], long)}: one policy call, and one preadv where the mode allows.
     * The buffers are looked at again only when the file ended first.
     */
    @Override
    public void readFully(ByteBuffer[] dsts, long offset) throws IOException {
        try {
            file.readFully(dsts, offset);
        } catch (EOFException e) {
            // The file shrank under us: the device keeps its size and reads zeros there.
            for (ByteBuffer dst : dsts) {
                while (dst.hasRemaining()) dst.put((byte) 0);
            }
        }
    }

    @Override
    public void write(ByteBuffer src, long offset, boolean fua) throws IOException {
        long written = -1;
        try {
            written = file.write(src, offset, fua);
        } finally {
            changed(offset, written);
        }
    }

    /** One {@link StorageFile#write(ByteBuffer[], long, boolean)}; FUA makes this write durable, not the file. */
    @Override
    public void write(ByteBuffer[] srcs, long offset, boolean fua) throws IOException {
        long written = -1;
        try {
            written = file.write(srcs, offset, fua);
        } finally {
            changed(offset, written);
        }
    }

    /** After a change of [offset, offset + length), or of an unknown part of the file (length -1): forgets its runs. */
    private void changed(long offset, long length) {
        if (known == null) return;
        if (length < 0) known.clear(); else known.forget(offset, length);
    }

    @Override
    public void flush() throws IOException {
        file.flush();
    }

    @Override
    public void trim(long offset, long length, boolean fua) throws IOException {
        holes = true;
        try {
            file.trim(offset, length);
        } finally {
            changed(offset, length);
        }
        if (fua) file.flush();
    }

    @Override
    public void zero(long offset, long length, Set<ZeroFlag> flags) throws IOException {
        if (flags.contains(ZeroFlag.FAST) && !solid.has(Capability.FAST_ZERO)) {
            throw new DeviceException(DeviceException.ENOTSUP, "zeroing " + name() + " would not be fast");
        }
        holes = true; // ZERO_RANGE may also leave unwritten extents that SEEK_HOLE reports as holes
        try {
            file.zero(offset, length, flags.contains(ZeroFlag.MAY_TRIM));
        } finally {
            changed(offset, length);
        }
        if (flags.contains(ZeroFlag.FUA)) file.flush();
    }

    /**
     * {@link StorageFile#extents(long, long, int)}: at most two SEEK_DATA/SEEK_HOLE calls per run returned. Where the
     * device keeps what it learned, none for a range it knows; else it learns the runs from offset on: those of the
     * range and {@link #LEARNED_RUNS} more, up to {@link #LEARNED_SPAN} away, whose cost (an fstat and two lseeks a
     * run) later reads of those runs do not pay again.
     */
    @Override
    public List<Extent> extents(long offset, long length, int maxExtents) throws IOException {
        List<Extent> extents = known == null || !ownsFile ? file.extents(offset, length, maxExtents)
                : learned(offset, length, maxExtents);
        return extents.isEmpty() ? List.of(new Extent(offset, length, false)) : extents;
    }

    static final int LEARNED_RUNS = 8;
    static final long LEARNED_SPAN = 1L << 30;

    private List<Extent> learned(long offset, long length, int maxExtents) throws IOException {
        List<Extent> found = known.lookup(offset, length, maxExtents);
        if (found != null) return found;
        long changes = known.changes();
        // As many runs as the range can hold (a run is at least a 4 KiB block), as asking for it alone would cost,
        // and a few beyond it for the reads that follow.
        int runs = (int) Math.min(maxExtents, Math.min(Integer.MAX_VALUE - LEARNED_RUNS, length / 4096 + 2)) + LEARNED_RUNS;
        List<Extent> fresh = file.extents(offset, Math.max(length, Math.min(LEARNED_SPAN, Long.MAX_VALUE - offset)), runs);
        known.learn(fresh, changes);
        return ExtentMap.clip(fresh, offset, length, maxExtents, true);
    }

    @Override
    public void cache(long offset, long length) throws IOException {
        file.prefetch(offset, length);
    }

    @Override
    public Capabilities capabilities() { return holes ? holed : solid; }

    /**
     * The O_DIRECT alignment ({@link StorageFile#requestAlignment()}), or 1 when the file's size is no multiple of it:
     * a client keeping to a minimum could not reach the last bytes (the NBD spec wants the size a multiple of the
     * minimum), and the file takes any request, unaligned ones bounced.
     */
    @Override
    public int minimumBlockSize() {
        int alignment = file.requestAlignment();
        return size % alignment == 0 ? alignment : 1;
    }

    @Override
    public int preferredBlockSize() { return Math.max(4096, file.requestAlignment()); }

    @Override
    public void close() throws IOException {
        if (closed.getAndSet(true)) return;
        if (known != null) known.release();
        if (ownsFile) file.close();
    }

    /** The path and what it runs with: the cache mode in effect (and the one asked for, when that was refused). */
    @Override
    public String toString() {
        CacheMode mode = file.cacheMode();
        return file.path() + " (" + (created ? "created, " : "") + mode.name().toLowerCase(Locale.ROOT)
                + (mode != file.requestedMode() ? ", " + file.requestedMode().name().toLowerCase(Locale.ROOT)
                        + " is not supported there" : "")
                + (file.isNative() ? "" : ", pure-Java path") + ")";
    }
}

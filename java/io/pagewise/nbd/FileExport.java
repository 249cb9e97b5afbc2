package io.pagewise.nbd;

import io.pagewise.CacheMode;
import io.pagewise.Extent;
import io.pagewise.StorageFile;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;

/**
 * Serves a file or block device through a {@link StorageFile}. Every connection shares the one StorageFile, and
 * FLUSH is an fdatasync of the whole file, so the export advertises CAN_MULTI_CONN.
 */
public final class FileExport implements Export {
    private final StorageFile file;
    private final boolean ownsFile;
    private final long size;
    /** Whether any hole may exist; a fully allocated file stays hole-free until a TRIM or zeroing punches one. */
    private volatile boolean holes;

    /**
     * Serves an open file; the caller keeps ownership of it (closing the export leaves it open).
     *
     * @param file the file to serve; writable when it was opened with WRITE
     * @throws IOException when the file's size or allocation map cannot be read
     */
    public FileExport(StorageFile file) throws IOException {
        this(file, false);
    }

    private FileExport(StorageFile file, boolean ownsFile) throws IOException {
        this.file = file;
        this.ownsFile = ownsFile;
        this.size = file.size();
        this.holes = canExtents() && hasHole(file, size);
    }

    /** The first two runs tell: a hole, or data up to the first hole, or data to the end. */
    private static boolean hasHole(StorageFile file, long size) throws IOException {
        for (Extent extent : file.extents(0, size, 2)) {
            if (extent.hole()) return true;
        }
        return false;
    }

    /**
     * Opens path under mode, read-only or read-write; closing the export closes the file.
     *
     * @param path     the file or block device to serve
     * @param mode     how the file uses the page cache
     * @param readOnly true to open it read-only, false for read-write
     * @return the export
     * @throws IOException when the file cannot be opened or its allocation map read
     * @throws UnsupportedOperationException when the mode needs the native library and it is not loaded
     */
    public static FileExport open(Path path, CacheMode mode, boolean readOnly) throws IOException {
        OpenOption[] options = readOnly ? new OpenOption[] {StandardOpenOption.READ}
                : new OpenOption[] {StandardOpenOption.READ, StandardOpenOption.WRITE};
        StorageFile file = StorageFile.open(path, mode, options);
        try {
            return new FileExport(file, true);
        } catch (IOException | RuntimeException e) {
            file.close();
            throw e;
        }
    }

    /** {@return the file this export serves} */
    public StorageFile file() {
        return file;
    }

    @Override
    public long size() {
        return size;
    }

    @Override
    public void readFully(ByteBuffer dst, long offset) throws IOException {
        readFully(new ByteBuffer[] {dst}, offset);
    }

    /** One {@link StorageFile#read(ByteBuffer[], long)}: one policy call, and one preadv where the mode allows. */
    @Override
    public void readFully(ByteBuffer[] dsts, long offset) throws IOException {
        file.read(dsts, offset);
        // The file may have shrunk under us: the export keeps its size and reads zeros there.
        for (ByteBuffer dst : dsts) {
            while (dst.hasRemaining()) dst.put((byte) 0);
        }
    }

    @Override
    public void write(ByteBuffer src, long offset, boolean fua) throws IOException {
        file.write(src, offset, fua);
    }

    /** One {@link StorageFile#write(ByteBuffer[], long, boolean)}; FUA makes this write durable, not the file. */
    @Override
    public void write(ByteBuffer[] srcs, long offset, boolean fua) throws IOException {
        file.write(srcs, offset, fua);
    }

    @Override
    public void flush() throws IOException {
        file.flush();
    }

    @Override
    public void trim(long offset, long length, boolean fua) throws IOException {
        holes = true;
        file.trim(offset, length);
        if (fua) file.flush();
    }

    @Override
    public void zero(long offset, long length, boolean mayTrim, boolean fast, boolean fua) throws IOException {
        if (fast && !canFastZero()) throw new NbdException(NbdException.ENOTSUP, "zeroing would not be fast");
        holes = true; // ZERO_RANGE may also leave unwritten extents that SEEK_HOLE reports as holes
        file.zero(offset, length, mayTrim);
        if (fua) file.flush();
    }

    @Override
    public List<Extent> extents(long offset, long length) throws IOException {
        return extents(offset, length, Integer.MAX_VALUE);
    }

    /** {@link StorageFile#extents(long, long, int)}: at most two SEEK_DATA/SEEK_HOLE calls per run returned. */
    @Override
    public List<Extent> extents(long offset, long length, int maxExtents) throws IOException {
        List<Extent> extents = file.extents(offset, length, maxExtents);
        return extents.isEmpty() ? List.of(new Extent(offset, length, false)) : extents;
    }

    @Override
    public void cache(long offset, long length) throws IOException {
        file.prefetch(offset, length);
    }

    @Override
    public boolean canWrite() { return file.isWritable(); }

    @Override
    public boolean canFlush() { return file.isWritable(); }

    @Override
    public boolean canFua() { return file.isWritable(); }

    @Override
    public boolean canTrim() { return file.isWritable(); }

    @Override
    public boolean canZero() { return file.isWritable(); }

    /** fallocate zeroes or punches a regular file in constant time on the file systems Linux commonly uses. */
    @Override
    public boolean canFastZero() { return file.isWritable() && file.isNative() && !file.isBlockDevice(); }

    @Override
    public boolean canExtents() { return file.isNative() && !file.isBlockDevice(); }

    /** CACHE is advertised only where it fills the page cache ({@link io.pagewise.CacheMode#prefetches()}). */
    @Override
    public boolean canCache() { return file.canPrefetch(); }

    @Override
    public boolean mayHaveHoles() { return holes; }

    @Override
    public boolean canMultiConn() { return true; }

    @Override
    public int minimumBlockSize() {
        return file.requestAlignment();
    }

    @Override
    public int preferredBlockSize() {
        return Math.max(4096, minimumBlockSize());
    }

    @Override
    public void close() throws IOException {
        if (ownsFile) file.close();
    }

    @Override
    public String toString() {
        return file.path() + " (" + file.cacheMode().name().toLowerCase(java.util.Locale.ROOT) + ")";
    }
}

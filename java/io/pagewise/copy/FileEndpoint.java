package io.pagewise.copy;

import io.pagewise.CacheMode;
import io.pagewise.Extent;
import io.pagewise.StorageFile;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;

/** A file or block device on either side of a copy, through {@link StorageFile} so the cache mode applies. */
public final class FileEndpoint implements CopySource, CopyDestination {
    private final StorageFile file;
    private final boolean created;

    private FileEndpoint(StorageFile file, boolean created) {
        this.file = file;
        this.created = created;
    }

    /**
     * Opens a file or block device to copy from, read-only.
     *
     * @param path the file or block device
     * @param mode how it uses the page cache
     * @return the source
     * @throws NoSuchFileException when path does not exist
     * @throws IOException when path is a directory or cannot be opened, as {@link StorageFile#open(Path, CacheMode,
     *         java.nio.file.OpenOption...)} says
     */
    public static FileEndpoint openSource(Path path, CacheMode mode) throws IOException {
        // A directory opens read-only; a missing path is StorageFile's NoSuchFileException, with its errno.
        if (Files.isDirectory(path)) throw new IOException("source " + path + " is a directory");
        return opened("source", new FileEndpoint(StorageFile.open(path, mode, StandardOpenOption.READ), false));
    }

    /**
     * Opens a destination file for writing; a missing one is created (sparse) with createSize bytes, and then
     * known to read as zeros, so the copy can skip zero runs.
     *
     * @param path       the file or block device
     * @param mode       how it uses the page cache
     * @param createSize the size of a file that has to be created, in bytes
     * @return the destination
     * @throws IOException when path is a directory or cannot be opened or created
     */
    public static FileEndpoint openDestination(Path path, CacheMode mode, long createSize) throws IOException {
        if (Files.isDirectory(path)) throw new IOException("destination " + path + " is a directory");
        boolean create = !Files.exists(path);
        StorageFile file = create
                ? StorageFile.open(path, mode, StandardOpenOption.READ, StandardOpenOption.WRITE, StandardOpenOption.CREATE_NEW)
                : StorageFile.open(path, mode, StandardOpenOption.READ, StandardOpenOption.WRITE);
        try {
            if (create) file.resize(createSize);
            return opened("destination", new FileEndpoint(file, create));
        } catch (IOException | RuntimeException e) {
            file.close();
            if (create) Files.deleteIfExists(path);
            throw e;
        }
    }

    /** Logs what the endpoint found on opening: the cache mode in effect and the alignment the copy will keep. */
    private static FileEndpoint opened(String role, FileEndpoint endpoint) {
        StorageFile file = endpoint.file;
        if (Copier.LOG.isLoggable(System.Logger.Level.DEBUG)) {
            CacheMode mode = file.cacheMode();
            Copier.LOG.log(System.Logger.Level.DEBUG, role + " " + file.path() + (endpoint.created ? " (created)" : "")
                    + ": cache mode " + mode
                    + (mode != file.requestedMode() ? " (" + file.requestedMode() + " is not supported there)" : "")
                    + (file.isNative() ? "" : ", pure-Java path") + ", requests aligned to " + file.requestAlignment());
        }
        return endpoint;
    }

    /** {@return the open file} */
    public StorageFile file() { return file; }

    /**
     * Whether {@link #openDestination} created the file, so that a failed copy can remove what it left.
     *
     * @return true when the file did not exist before this endpoint opened it
     */
    public boolean created() { return created; }

    @Override
    public String name() { return file.path().toString(); }

    @Override
    public long size() throws IOException { return file.size(); }

    @Override
    public List<Extent> extents(long offset, long length) throws IOException {
        List<Extent> extents = file.extents(offset, length);
        return extents.isEmpty() ? List.of(new Extent(offset, length, false)) : extents;
    }

    @Override
    public void readFully(ByteBuffer dst, long offset) throws IOException {
        // One request, as the server's: one policy call and, where the mode allows, one preadv or preadv2.
        file.readFully(dst, offset);
    }

    @Override
    public void write(ByteBuffer src, long offset) throws IOException {
        file.write(src, offset);
    }

    @Override
    public void zero(long offset, long length, boolean allocate) throws IOException {
        file.zero(offset, length, !allocate);
    }

    @Override
    public void flush() throws IOException {
        file.flush();
    }

    @Override
    public boolean startsZeroed() { return created; }

    @Override
    public int blockSize() { return file.requestAlignment(); }

    @Override
    public int maximumRequest() { return Integer.MAX_VALUE; }

    @Override
    public void close() throws IOException {
        file.close();
    }
}

package io.pagewise.nbd.server;

import io.pagewise.device.BlockDevice;
import io.pagewise.internal.FileKinds;
import java.io.Closeable;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Every regular file and block device of a directory as an export named after the file, like nbdkit's file plugin
 * with {@code dir=}: the directory is listed again at each {@code NBD_OPT_LIST} and looked in at each request for an
 * export, so files added later appear and removed ones disappear. Subdirectories, sockets, FIFOs and names starting
 * with a dot are left out; symbolic links count as what they point to.
 *
 * <p>A file is opened (by the opener, which chooses its cache mode and whether it is writable) when a client first
 * asks for it, and stays open for later clients while it is the same file (device and inode) of the same size; a
 * file replaced under the same name, or resized, is opened anew for the clients that come after. The device of a
 * file replaced, resized or deleted stays open (clients may still be using it) until {@link #close()}, which closes
 * every device opened, after the server has stopped.
 */
public final class DirectoryExports implements ExportSource, Closeable {
    /** Opens a file of the directory as a device. */
    @FunctionalInterface
    public interface Opener {
        /**
         * {@return the device serving file}
         *
         * @param file a regular file or block device in the directory
         * @throws IOException when it cannot be opened
         */
        BlockDevice open(Path file) throws IOException;
    }

    private record Opened(Object fileKey, long size, ExportEntry entry) {}

    private final Path directory;
    private final Opener opener;
    private final Map<String, Opened> open = new HashMap<>();
    /** Devices of files replaced since they were opened: clients may still use them, so they close at the end. */
    private final List<BlockDevice> replaced = new ArrayList<>();
    private boolean closed;

    private DirectoryExports(Path directory, Opener opener) {
        this.directory = directory;
        this.opener = opener;
    }

    /**
     * {@return the exports of a directory}
     *
     * @param directory the directory whose files to serve
     * @param opener    opens a file as the device that serves it
     * @throws NoSuchFileException   when the directory does not exist
     * @throws NotDirectoryException when it is not a directory
     */
    public static DirectoryExports of(Path directory, Opener opener) throws IOException {
        java.util.Objects.requireNonNull(opener, "opener");
        if (!Files.exists(directory)) throw new NoSuchFileException(directory.toString(), null, "export directory does not exist");
        if (!Files.isDirectory(directory)) throw new NotDirectoryException(directory + ": the export directory is not a directory");
        return new DirectoryExports(directory, opener);
    }

    /** {@return the directory served} */
    public Path directory() {
        return directory;
    }

    @Override
    public List<Listing> list() throws IOException {
        List<Listing> listings = new ArrayList<>();
        try (DirectoryStream<Path> files = Files.newDirectoryStream(directory)) {
            for (Path file : files) {
                String name = file.getFileName().toString();
                BasicFileAttributes attributes = servable(name);
                if (attributes != null) listings.add(new Listing(name, describe(attributes)));
            }
        }
        listings.sort((a, b) -> a.name().compareTo(b.name()));
        return listings;
    }

    @Override
    public synchronized ExportEntry find(String name) throws IOException {
        if (closed) return null;
        BasicFileAttributes attributes = servable(name);
        if (attributes == null) return null;
        Opened known = open.get(name);
        Object key = attributes.fileKey();
        // The same file at the same size: its device serves. Resized in place, it is opened anew, so that new clients
        // see its size now (a device's size does not change while it is open).
        if (known != null && key != null && key.equals(known.fileKey()) && attributes.size() == known.size()) {
            return known.entry();
        }
        Path file = directory.resolve(name);
        ExportEntry entry = new ExportEntry(name, describe(attributes), opener.open(file), file);
        if (known != null) replaced.add(known.entry().device());
        open.put(name, new Opened(key, attributes.size(), entry));
        return entry;
    }

    /** Closes every device opened; a later request finds no export. */
    @Override
    public synchronized void close() throws IOException {
        closed = true;
        IOException failure = null;
        List<BlockDevice> devices = new ArrayList<>(replaced);
        for (Opened opened : open.values()) devices.add(opened.entry().device());
        open.clear();
        replaced.clear();
        for (BlockDevice device : devices) {
            try {
                device.close();
            } catch (IOException e) {
                if (failure == null) failure = e;
            }
        }
        if (failure != null) throw failure;
    }

    /** The attributes of a name that is a servable file of the directory, else null. */
    private BasicFileAttributes servable(String name) {
        if (name.isEmpty() || name.startsWith(".") || name.contains("/") || name.indexOf('\0') >= 0) return null;
        try {
            Path file = directory.resolve(name);
            BasicFileAttributes attributes = Files.readAttributes(file, BasicFileAttributes.class);
            return attributes.isRegularFile() || (attributes.isOther() && FileKinds.isBlockDevice(file)) ? attributes : null;
        } catch (IOException | java.nio.file.InvalidPathException e) {
            return null;
        }
    }


    private static String describe(BasicFileAttributes attributes) {
        return attributes.isRegularFile() ? String.format(Locale.ROOT, "file, %d bytes", attributes.size()) : "block device";
    }
}

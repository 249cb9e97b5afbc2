package io.pagewise.nbd.server;

import io.pagewise.device.BlockDevice;
import io.pagewise.device.Capability;
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
 * file replaced under the same name, or resized, is opened anew for the clients that come after. The old device is
 * flushed and closed once no client that was handed it is connected (the server tells {@link #released}), so a
 * replaced or deleted file's space is freed then. {@link #close()} closes every device still open, after the
 * server has stopped.
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
    /** How many times each entry was handed to clients that have not gone yet (see {@link #released}). */
    private final Map<ExportEntry, Integer> users = new HashMap<>();
    /** Entries of files replaced or resized since, which clients still use: closed when the last one goes. */
    private final List<ExportEntry> retired = new ArrayList<>();
    /** The first failure to flush or close a retired device, reported by {@link #close()}. */
    private IOException retiredFailure;
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
        synchronized (this) {
            if (!closed) retireGone();
        }
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
        retireGone();
        BasicFileAttributes attributes = servable(name);
        if (attributes == null) return null;
        Opened known = open.get(name);
        Object key = attributes.fileKey();
        // The same file at the same size: its device serves. Resized in place, it is opened anew, so that new clients
        // see its size now (a device's size does not change while it is open).
        if (known != null && key != null && key.equals(known.fileKey()) && attributes.size() == known.size()) {
            users.merge(known.entry(), 1, Integer::sum);
            return known.entry();
        }
        Path file = directory.resolve(name);
        ExportEntry entry = new ExportEntry(name, describe(attributes), opener.open(file), file);
        if (known != null) retire(known.entry());
        open.put(name, new Opened(key, attributes.size(), entry));
        users.merge(entry, 1, Integer::sum);
        return entry;
    }

    /** A client that was handed entry has gone: a retired entry's device closes with its last client. */
    @Override
    public synchronized void released(ExportEntry entry) {
        Integer count = users.get(entry);
        if (count == null) return;
        if (count > 1) {
            users.put(entry, count - 1);
            return;
        }
        users.remove(entry);
        if (retired.remove(entry)) {
            closeRetired(entry);
        } else {
            retireGone(); // the current entry of a file deleted or renamed away since, which nobody can ask for now
        }
    }

    /**
     * Retires the entries whose files were deleted or replaced since they were opened, so that a deleted file's device
     * closes (now, or with its last client) even when nobody asks for its name again: at each request and listing.
     */
    private void retireGone() {
        for (java.util.Iterator<Map.Entry<String, Opened>> it = open.entrySet().iterator(); it.hasNext(); ) {
            Map.Entry<String, Opened> e = it.next();
            if (sameFile(e.getKey(), e.getValue())) continue;
            it.remove();
            retire(e.getValue().entry());
        }
    }

    /** Whether the directory still has, under name, the file that was opened. */
    private boolean sameFile(String name, Opened opened) {
        BasicFileAttributes now = servable(name);
        return now != null && now.fileKey() != null && now.fileKey().equals(opened.fileKey());
    }

    /** The file of entry was replaced or resized: its device closes now if no client has it, else with the last. */
    private void retire(ExportEntry entry) {
        if (users.containsKey(entry)) {
            retired.add(entry);
        } else {
            closeRetired(entry);
        }
    }

    /** Flushes and closes a device no client uses any more, so that a replaced or deleted file's space is freed. */
    private void closeRetired(ExportEntry entry) {
        try (BlockDevice device = entry.device()) {
            if (device.capabilities().has(Capability.FLUSH)) device.flush();
        } catch (IOException e) {
            if (retiredFailure == null) retiredFailure = e;
        }
    }

    /** Closes every device opened; a later request finds no export. */
    @Override
    public synchronized void close() throws IOException {
        closed = true;
        IOException failure = retiredFailure;
        List<BlockDevice> devices = new ArrayList<>();
        for (ExportEntry entry : retired) devices.add(entry.device());
        for (Opened opened : open.values()) devices.add(opened.entry().device());
        open.clear();
        retired.clear();
        users.clear();
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

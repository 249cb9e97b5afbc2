package io.pagewise.cli;

import io.pagewise.StorageFile;
import io.pagewise.backends.FileDevice;
import io.pagewise.backends.NbdDevice;
import io.pagewise.device.BlockDevice;
import io.pagewise.filters.ReadOnlyFilter;
import io.pagewise.nbd.server.DirectoryExports;
import io.pagewise.nbd.server.ExportEntry;
import io.pagewise.nbd.server.NbdServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

/**
 * What one serve run serves: the FILEs (the demo disk without FILE or --dir), the proxied export, or --dir's files;
 * opened and added to the server, named for messages, and closed at exit.
 */
final class ServeExports {
    /**
     * A FILE served: its export name, the file, the device open on it, and what the server serves (the device under
     * --filter).
     */
    record Served(String name, Path file, FileDevice export, BlockDevice device) {}

    private final ServeOptions options;
    private final System.Logger logger;
    /** Opens the FILEs, their bitmaps and filters, and --dir's files. */
    private final ServeDevices devices;
    /** Directories the run removes at exit, after the statistics: the demo disk's goes there. */
    private final List<Path> temporary;
    /** FILEs that --create made, until the server listens; removed if it never does. */
    private final List<Path> created = new ArrayList<>();
    /** The FILEs served (the demo disk counts as one), in the order given; empty when proxying or with --dir alone. */
    private final List<Served> served = new ArrayList<>();
    /** The proxied export (behind the read-only filter with -r), under --filter; or null. */
    private BlockDevice proxied;
    /** --dir's exports, or null. */
    private DirectoryExports directory;

    ServeExports(ServeOptions options, System.Logger logger, ServeDevices devices, List<Path> temporary) {
        this.options = options;
        this.logger = logger;
        this.devices = devices;
        this.temporary = temporary;
    }

    /** Opens the proxied export, or every FILE and --dir, and adds them to the server. */
    void addTo(NbdServer.Builder builder) throws IOException {
        if (options.upstream != null) {
            // Up to 4 connections to the upstream server, when it allows multi-conn.
            BlockDevice upstream = NbdDevice.connect(options.upstream, 4);
            proxied = devices.withBitmaps(options.readOnly ? new ReadOnlyFilter(upstream) : upstream, null);
            proxied = devices.filtered(proxied); // when it fails, close() closes what proxied holds
            builder.export(options.exportName, options.description, proxied);
        } else {
            openFiles(builder);
        }
    }

    /** The server listens: the FILEs that --create made are served now, and stay. */
    void keepCreatedFiles() {
        created.clear();
    }

    /**
     * Opens every FILE (the demo disk without FILE or --dir) and --dir, and adds them to the server. Each FILE is
     * checked for a container signature before it is created, extended or opened.
     */
    private void openFiles(NbdServer.Builder builder) throws IOException {
        for (ServeOptions.FileOperand f : options.files) {
            if (Files.exists(f.path())) devices.refuseContainer(f.path());
        }
        if (options.files.isEmpty() && options.dir == null) {
            Path dir = Files.createTempDirectory("pagewise-demo-");
            temporary.add(dir);
            Path demo = dir.resolve("demo.img");
            try (StorageFile f = StorageFile.open(demo, StandardOpenOption.READ, StandardOpenOption.WRITE,
                    StandardOpenOption.CREATE_NEW)) {
                f.resize(ServeCommand.DEMO_SIZE);
            }
            open(options.exportName, demo);
        }
        for (ServeOptions.FileOperand f : options.files) {
            if (devices.prepareFile(f.path())) created.add(f.path());
            open(f.name(), f.path());
        }
        // --description describes the one FILE, beside --dir too; without it a FILE beside others shows its path.
        boolean lone = served.size() == 1 && (options.dir == null || !options.description.isEmpty());
        for (Served s : served) {
            // A lone FILE keeps the description it always had (--description, else none); several show their paths.
            builder.export(new ExportEntry(s.name(), lone ? options.description : s.file().toString(), s.device(), s.file()));
        }
        if (options.dir != null) {
            try {
                directory = DirectoryExports.of(options.dir, devices::openFromDirectory);
            } catch (IOException e) {
                throw new IOException("--dir=" + options.dir + ": " + (e instanceof java.nio.file.NoSuchFileException
                        ? "no such directory" : "not a directory"), e);
            }
            builder.exports(options.forceRaw ? directory : new ServeDevices.WithoutContainers(directory));
            warnOfUnnamableFiles(options.dir);
        }
    }

    /**
     * A file whose name the locale's character set cannot decode (not UTF-8 under a UTF-8 locale) cannot be asked
     * for by name, so --dir leaves it out: said once at start rather than never.
     */
    private void warnOfUnnamableFiles(Path dir) {
        try (java.nio.file.DirectoryStream<Path> files = Files.newDirectoryStream(dir)) {
            for (Path file : files) {
                String name = file.getFileName().toString();
                boolean named;
                try {
                    named = dir.resolve(name).equals(file);
                } catch (java.nio.file.InvalidPathException e) {
                    named = false;
                }
                if (!named) {
                    String advice = Main.utf8LocaleAdvice();
                    logger.log(System.Logger.Level.WARNING, "--dir=" + dir + ": '" + name + "' is not served: its name"
                            + " is not valid in " + Main.localeCharset() + "; rename it"
                            + (advice == null ? "" : ", or " + advice));
                }
            }
        } catch (IOException e) {
            // the listing at each client's LIST reports what is wrong with the directory
        }
    }

    private void open(String name, Path file) throws IOException {
        FileDevice export = devices.openFile(file);
        BlockDevice device = devices.withBitmaps(export, file);
        try {
            served.add(new Served(name, file, export, devices.filtered(device)));
        } catch (IOException | RuntimeException e) {
            ServeDevices.closeAfterFailure(device, e); // the bitmaps (saved) and the file under them
            throw e;
        }
    }

    /** FILEs that --create made for a server that then failed to start: a failed start leaves nothing behind. */
    void deleteCreatedFiles() {
        for (Path file : created) {
            try {
                Files.deleteIfExists(file);
            } catch (IOException e) {
                logger.log(System.Logger.Level.WARNING, "cannot remove " + file + ", made by --create: " + Main.message(e));
            }
        }
        created.clear();
    }

    /** {@return the FILEs served (the demo disk counts as one), in the order given} */
    List<Served> files() {
        return served;
    }

    /** {@return the proxied export, under --filter; or null} */
    BlockDevice proxied() {
        return proxied;
    }

    /** {@return whether --dir's files are served} */
    boolean servesDirectory() {
        return directory != null;
    }


    /**
     * {@return the export named by $exportname and $uri}: a lone FILE's (or the proxied, or the demo disk's), else
     * the default export, else the first FILE's, else "" (--dir alone)
     */
    String mainExport() {
        if (options.upstream != null || (served.size() == 1 && options.dir == null)) {
            return served.isEmpty() ? options.exportName : served.get(0).name();
        }
        if (options.defaultExport != null) return options.defaultExport;
        return served.isEmpty() ? "" : served.get(0).name();
    }

    /** What is served, for messages: the file, the proxied URI, or "the exports" when there are several. */
    String whatIsServed() {
        if (options.upstream != null) return options.upstream;
        if (served.size() == 1 && options.dir == null) {
            return options.files.isEmpty() ? "the demo disk" : served.get(0).file().toString();
        }
        return "the exports";
    }

    /**
     * Closes every export; a failure is logged with what failed. {@return false when a close failed: writes that no
     * FLUSH or FUA made durable may be lost}
     */
    boolean close() {
        boolean closed = true;
        for (Served s : served) closed &= close(s.device(), served.size() > 1 ? s.file().toString() : whatIsServed());
        if (proxied != null) closed &= close(proxied, whatIsServed());
        if (directory != null) closed &= close(directory, "the files of --dir=" + options.dir);
        return closed;
    }

    private boolean close(java.io.Closeable device, Object what) {
        try {
            device.close();
            return true;
        } catch (IOException e) {
            logger.log(System.Logger.Level.ERROR, "closing " + what + " failed: " + e.getMessage()
                    + "; writes that no FLUSH or FUA made durable may be lost");
            return false;
        }
    }
}

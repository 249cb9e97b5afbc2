package io.pagewise.cli;

import io.pagewise.AccessHint;
import io.pagewise.StorageFile;
import io.pagewise.backends.FileDevice;
import io.pagewise.backends.ImageFormat;
import io.pagewise.backup.DirtyBitmap;
import io.pagewise.device.BlockDevice;
import io.pagewise.filters.DirtyBitmapFilter;
import io.pagewise.filters.Filters;
import io.pagewise.nbd.server.DirectoryExports;
import io.pagewise.nbd.server.ExportEntry;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * How serve opens what it serves: a FILE with --cache, --hint and -r, under its --bitmap filters (innermost) and its
 * --filter stack; the files of --dir as clients ask for them; and the container images it refuses without
 * --force-raw.
 */
final class ServeDevices {
    private final ServeOptions options;
    private final System.Logger logger;
    /** The --bitmap bitmaps, open, and their files, for the announcement. */
    private final List<DirtyBitmap> bitmaps = new ArrayList<>();
    private final List<Path> bitmapFiles = new ArrayList<>();

    ServeDevices(ServeOptions options, System.Logger logger) {
        this.options = options;
        this.logger = logger;
    }

    /** {@return the bitmaps opened so far} */
    List<DirtyBitmap> bitmaps() {
        return bitmaps;
    }

    /** {@return the files of the bitmaps opened so far, in the same order} */
    List<Path> bitmapFiles() {
        return bitmapFiles;
    }

    /**
     * The --bitmap filters over a FILE's device (or the proxied one: image null), the innermost layer, so that every
     * write through any --filter is recorded. When one cannot be opened, base is closed, with (and by) the bitmaps
     * already over it, which are saved.
     */
    BlockDevice withBitmaps(BlockDevice base, Path image) throws IOException {
        BlockDevice device = base;
        for (ServeArguments.BitmapSpec spec : options.bitmaps) {
            Path bitmapFile = spec.fileFor(image);
            boolean made = isMissingOrEmpty(bitmapFile);
            DirtyBitmap bitmap;
            try {
                bitmap = DirtyBitmap.open(bitmapFile, spec.name(), image, device.size(), spec.granularity());
            } catch (IOException | IllegalArgumentException e) {
                closeAfterFailure(device, e);
                throw new IOException("--bitmap=" + spec.name() + ": " + Main.message(e), e);
            }
            String note = "";
            try {
                if (options.clears(spec.name())) {
                    note = made ? "" : cleared(bitmap);
                    bitmap.clear();
                } else if (made) {
                    note = "new: it records writes from now on, so what changed before is not in it (copy the whole"
                            + " image once)";
                }
                device = new DirtyBitmapFilter(device, bitmap);
            } catch (IOException | RuntimeException e) {
                closeAfterFailure(bitmap, e);
                closeAfterFailure(device, e);
                throw e;
            }
            bitmaps.add(bitmap);
            bitmapFiles.add(bitmapFile);
            // Logged, not only announced: with --run or under systemd this is where an operator sees it.
            String named = "dirty bitmap " + spec.name() + " (" + bitmapFile + ")";
            if (!note.isEmpty()) logger.log(System.Logger.Level.INFO, named + ": " + note);
            if (!bitmap.isValid()) {
                logger.log(System.Logger.Level.WARNING, named + " is INVALID (the image changed unrecorded): it reports"
                        + " everything changed until --bitmap-clear");
            }
        }
        return device;
    }

    private static boolean isMissingOrEmpty(Path file) {
        try {
            return !java.nio.file.Files.exists(file) || java.nio.file.Files.size(file) == 0;
        } catch (IOException e) {
            return false; // DirtyBitmap.open says what is wrong with it
        }
    }

    /** What a clear drops: the changes the generation before recorded. */
    private static String cleared(DirtyBitmap bitmap) {
        if (!bitmap.isValid()) return "cleared generation " + bitmap.generation() + ", which was INVALID";
        long changed = 0;
        for (long at = 0; at < bitmap.imageSize(); ) {
            List<io.pagewise.Extent> runs = bitmap.runs(at, bitmap.imageSize() - at, 1024);
            if (runs.isEmpty()) break;
            for (io.pagewise.Extent run : runs) {
                if (!run.hole()) changed += run.length();
                at = run.end();
            }
        }
        return "cleared generation " + bitmap.generation() + ", which marked " + Main.bytes(changed) + " changed";
    }

    /**
     * The --filter stack over the device, so that closing what is served at exit closes the filters and the device.
     * A filter that refuses its parameters is a usage mistake; the device is closed (by finish) and nothing served.
     */
    BlockDevice filtered(BlockDevice base) throws IOException {
        if (options.filters.isEmpty()) return base;
        try {
            return Filters.apply(base, options.filters);
        } catch (IllegalArgumentException e) {
            throw new ServeRun.FilterSpecException("--filter: " + e.getMessage());
        }
    }

    /** Closes what was opened before a failure, keeping a failure to close as suppressed. */
    static void closeAfterFailure(java.io.Closeable opened, Exception failure) {
        try {
            opened.close();
        } catch (IOException | RuntimeException e) {
            failure.addSuppressed(e);
        }
    }

    /** A FILE with --cache, --hint and -r. */
    FileDevice openFile(Path file) throws IOException {
        if (io.pagewise.internal.FileKinds.isCharacterDevice(file)) {
            // /dev/null served as a 0-byte export, and its flush failed at exit (EINVAL), which exited 1.
            throw new java.nio.file.FileSystemException(file.toString(), null,
                    "a character device, which has no size or blocks to serve: give a file or block device");
        }
        FileDevice export = options.readOnly ? FileDevice.open(file, options.cache, StandardOpenOption.READ)
                : FileDevice.open(file, options.cache, StandardOpenOption.READ, StandardOpenOption.WRITE);
        if (options.hint != AccessHint.NORMAL) export.file().advise(options.hint);
        return export;
    }

    /**
     * A file of --dir that a client asked for, opened as the FILEs are; a container is refused to the client (and
     * logged by the server) unless --force-raw.
     */
    BlockDevice openFromDirectory(Path file) throws IOException {
        Optional<ImageFormat> format;
        try {
            format = ImageFormat.detect(file);
        } catch (IOException e) {
            throw cannotOpen(e); // unreadable (by --user, say): the first look at the file fails
        }
        if (format.isPresent()) {
            if (!options.forceRaw) {
                String problem = format.get().problem() + "; not served without --force-raw";
                // The client is told why in the error reply; the operator learns it here.
                logger.log(System.Logger.Level.WARNING, "a client asked for " + file + ", which " + problem);
                throw new IOException(file + " " + problem);
            }
            logger.log(System.Logger.Level.WARNING, format.get().warning(file));
        }
        FileDevice export;
        try {
            export = openFile(file);
        } catch (IOException e) {
            throw cannotOpen(e);
        }
        try {
            return filtered(export);
        } catch (IOException e) {
            export.close();
            throw e;
        }
    }

    /**
     * The failure to open a file of --dir that a client asked for, with the reason in its message for the server's
     * log (the JDK's AccessDeniedException says only the path), which names the connection and the export. The
     * client's error reply says the errno, not the path; some clients show only "no such export".
     */
    private static IOException cannotOpen(IOException e) {
        String reason = Main.message(e);
        return reason.equals(e.getMessage()) ? e : new IOException(reason, e);
    }

    /**
     * --dir's exports without the container images, which are not served without --force-raw: so that clients that
     * list the exports (nbdinfo --list asks each for its size) are not shown what they cannot have.
     */
    static final class WithoutContainers implements io.pagewise.nbd.server.ExportSource {
        private final DirectoryExports directory;

        WithoutContainers(DirectoryExports directory) {
            this.directory = directory;
        }

        @Override
        public List<Listing> list() throws IOException {
            List<Listing> listings = new ArrayList<>();
            for (Listing listing : directory.list()) {
                try {
                    if (ImageFormat.detect(directory.directory().resolve(listing.name())).isPresent()) continue;
                } catch (IOException e) {
                    // listed: asking for it will tell the client what is wrong
                }
                listings.add(listing);
            }
            return listings;
        }

        @Override
        public ExportEntry find(String name) throws IOException {
            return directory.find(name);
        }

        /** Passed on: the directory closes a replaced file's device once its last client has gone. */
        @Override
        public void released(ExportEntry entry) {
            directory.released(entry);
        }
    }

    /** A FILE that starts with a container's signature: refused, or with --force-raw a warning. */
    void refuseContainer(Path file) throws IOException {
        Optional<ImageFormat> format = ImageFormat.detect(file);
        if (format.isEmpty()) return;
        if (!options.forceRaw) {
            throw new ServeRun.UsageProblem("not serving " + file + ": it " + format.get().problem()
                    + "; --force-raw serves it raw anyway");
        }
        logger.log(System.Logger.Level.WARNING, format.get().warning(file));
    }

    /** Makes FILE with --create (or extends it to that size); returns true when it did not exist before. */
    boolean prepareFile(Path file) throws IOException {
        boolean existed = Files.exists(file);
        if (options.create != null) {
            try (StorageFile f = StorageFile.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE,
                    StandardOpenOption.CREATE)) {
                if (f.size() < options.create) f.resize(options.create);
            } catch (IOException | RuntimeException e) {
                if (!existed) Files.deleteIfExists(file); // a size the file system refuses leaves no empty file
                throw e;
            }
        } else if (!existed) {
            throw new IOException(file + ": no such file (use --create=SIZE to make one)");
        }
        return !existed;
    }
}

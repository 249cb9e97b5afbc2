package io.pagewise.cli;

import io.pagewise.StorageFile;
import io.pagewise.backends.FileDevice;
import io.pagewise.backends.NbdDevice;
import io.pagewise.backends.SyntheticDevices;
import io.pagewise.copy.BlockHash;
import io.pagewise.copy.Copier;
import io.pagewise.copy.CopyException;
import io.pagewise.copy.CopyResult;
import io.pagewise.copy.StreamCopier;
import io.pagewise.device.BlockDevice;
import io.pagewise.device.ChangeTracker;
import io.pagewise.filters.Filters;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.channels.Channels;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/** One run of {@code copy}: opens the endpoints, copies, reports, and cleans up after a failure. */
final class CopyRun {
    /** A copy between the opened endpoints. */
    @FunctionalInterface
    private interface Body {
        CopyResult run() throws IOException;
    }

    /**
     * A usage mistake found once an end is open: a --filter or --dst-filter that the filters refused once applied, a
     * container FILE without --force-raw: exit status 2.
     */
    private static final class RefusedOnceOpen extends Exception {
        RefusedOnceOpen(String message) {
            super(message);
        }
    }

    private final CopyCommand.Options options;
    private final InputStream in;
    private final OutputStream data;
    private final PrintStream err;
    private final CountDownLatch finished = new CountDownLatch(1);
    /** Stops the copy that runs; set before it starts. */
    private volatile Runnable cancel = () -> {};
    /** How far the copy that runs has come. */
    private LongSupplier bytesDone = () -> 0;
    private ProgressReporter reporter;
    /** The destination when it is a file, for the clean-up after a failure. */
    private Path destinationFile;
    private boolean destinationCreated;
    private boolean discarded;

    CopyRun(CopyCommand.Options options, InputStream in, OutputStream data, PrintStream err) {
        this.options = options;
        this.in = in;
        this.data = data;
        this.err = err;
    }

    int run() {
        Thread stopOnSignal = new Thread(this::stopAndWait, "pagewise-copy-interrupt");
        Runtime.getRuntime().addShutdownHook(stopOnSignal);
        try {
            return copy();
        } catch (RefusedOnceOpen e) {
            return CopyCommand.usageError(err, e.getMessage());
        } finally {
            finished.countDown();
            try {
                Runtime.getRuntime().removeShutdownHook(stopOnSignal);
            } catch (IllegalStateException shuttingDown) {
                // the hook is running: it waited for the latch above
            }
        }
    }

    /** Ctrl-C: stop queueing, let requests in flight finish, close the endpoints. */
    private void stopAndWait() {
        cancel.run();
        try {
            finished.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private int copy() throws RefusedOnceOpen {
        if (options.source.isStream()) return fromInput();
        BlockDevice source;
        try {
            source = options.source.openSource(options.srcCache, options.connections, options.changed);
            refuseContainer(options.source, source, "SRC", true);
        } catch (IOException | IllegalArgumentException e) {
            err.println("pagewise copy: cannot open source " + options.source.text() + ": " + Main.message(e));
            return 1;
        }
        BlockDevice src = filtered(source, "--filter", options.sourceFilters);
        try (src) {
            if (options.destination.isStream()) {
                StreamCopier copier = streamCopier();
                return guarded(src.toString(), "-", src.size(), options.copy.requestSize(),
                        () -> copier.copy(src, Channels.newChannel(data)));
            }
            BlockDevice destination;
            try {
                destination = openDestination(options.destination, src.size());
                if (!destinationCreated) refuseContainer(options.destination, destination, "DST", false);
            } catch (IOException | IllegalArgumentException e) {
                err.println("pagewise copy: cannot open destination " + options.destination.text() + ": " + Main.message(e));
                return 1;
            }
            BlockDevice filtered;
            try {
                filtered = filtered(destination, "--dst-filter", options.destinationFilters);
            } catch (RefusedOnceOpen e) {
                // A usage mistake leaves nothing behind: not the file that opening the destination created.
                if (destinationCreated) Files.deleteIfExists(destinationFile);
                throw e;
            }
            try (BlockDevice dst = filtered) {
                Copier copier = new Copier(options.copy);
                cancel = copier::cancel;
                bytesDone = copier::bytesDone;
                ChangeTracker changes = null;
                if (options.changed != null) {
                    changes = ((NbdDevice) source).dirtyBitmap(options.changed);
                    if (dst.size() != src.size()) {
                        err.println("pagewise copy: --changed=" + options.changed + ": destination " + dst.name() + " has "
                                + dst.size() + " bytes and source " + src.name() + " " + src.size()
                                + ": an incremental copy goes into an earlier copy of the same size");
                        return 1;
                    }
                }
                ChangeTracker changed = changes;
                // The devices' own descriptions: an NBD export's says how many connections it got and their headers.
                return guarded(src.toString(), dst.toString(), src.size(), copier.requestSize(src, dst), () -> {
                    CopyResult result = copier.copy(src, dst, changed);
                    // As blksum prints it: the checksum, two spaces and the image it describes: DST when it holds
                    // just what was copied, else SRC (null: keeps nothing, and a larger DST has more than SRC's bytes).
                    byte[] sum = copier.checksum();
                    if (sum != null) {
                        Endpoint described = options.destination.kind() == Endpoint.Kind.DISCARD
                                || dst.size() != src.size() ? options.source : options.destination;
                        data.write((BlockHash.hex(sum) + "  " + described.text() + "\n").getBytes(StandardCharsets.UTF_8));
                    }
                    return result;
                });
            }
        } catch (IOException e) {
            return closeFailed(e);
        }
    }

    /**
     * SRC is -: a destination that exists keeps its size (the input may not be longer); a missing file is created
     * and grows with the input, so it has no fixed size for --dst-filter to work on.
     */
    private int fromInput() throws RefusedOnceOpen {
        StreamCopier copier = streamCopier();
        String target = options.destination.text();
        if (options.destination.kind() == Endpoint.Kind.FILE && !Files.exists(Path.of(target))) {
            if (!options.destinationFilters.isEmpty()) {
                throw new RefusedOnceOpen("--dst-filter needs a destination of fixed size, and " + target + " does not"
                        + " exist: with SRC - it would grow as the input is read (create it first, or drop --dst-filter)");
            }
            StorageFile file;
            try {
                file = StorageFile.open(Path.of(target), options.dstCache, StandardOpenOption.READ,
                        StandardOpenOption.WRITE, StandardOpenOption.CREATE_NEW);
            } catch (IOException | RuntimeException e) {
                err.println("pagewise copy: cannot open destination " + target + ": " + Main.message(e));
                return 1;
            }
            destinationFile = file.path();
            destinationCreated = true;
            try (file) {
                return guarded("-", target, -1, options.copy.requestSize(),
                        () -> copier.copy(Channels.newChannel(in), file));
            } catch (IOException e) {
                return closeFailed(e);
            }
        }
        BlockDevice destination;
        try {
            if (options.destination.kind() == Endpoint.Kind.FILE) {
                destination = FileDevice.open(Path.of(target), options.dstCache, StandardOpenOption.READ,
                        StandardOpenOption.WRITE);
                refuseContainer(options.destination, destination, "DST", false);
                destinationFile = Path.of(target);
            } else {
                destination = openDestination(options.destination, 0);
            }
        } catch (IOException | IllegalArgumentException e) {
            err.println("pagewise copy: cannot open destination " + target + ": " + Main.message(e));
            return 1;
        }
        try (BlockDevice dst = filtered(destination, "--dst-filter", options.destinationFilters)) {
            return guarded("-", dst.toString(), -1, options.copy.requestSize(),
                    () -> copier.copy(Channels.newChannel(in), dst));
        } catch (IOException e) {
            return closeFailed(e);
        }
    }

    /** Closing an end failed (its last writes may not have reached it): a failed copy. */
    private int closeFailed(IOException e) {
        err.println("pagewise copy: " + Main.message(e));
        discardUnfinishedDestination(false);
        return 1;
    }

    private StreamCopier streamCopier() {
        StreamCopier copier = new StreamCopier(options.copy);
        cancel = copier::cancel;
        bytesDone = copier::bytesDone;
        return copier;
    }

    /**
     * Refuses an end just opened, closing it, when it is a FILE that starts with a container's signature and
     * --force-raw was not given; closes it too when its first bytes cannot be read.
     */
    private void refuseContainer(Endpoint endpoint, BlockDevice device, String role, boolean source)
            throws RefusedOnceOpen, IOException {
        if (options.forceRaw) return;
        try {
            endpoint.refuseContainer(device, role, source);
        } catch (UsageException | IOException e) {
            try {
                device.close();
            } catch (IOException | RuntimeException suppressed) {
                e.addSuppressed(suppressed);
            }
            if (e instanceof UsageException) throw new RefusedOnceOpen(e.getMessage());
            throw (IOException) e;
        }
    }

    /** The filters over a device just opened; when they refuse their parameters the device is closed. */
    private static BlockDevice filtered(BlockDevice device, String option, List<String> specs) throws RefusedOnceOpen {
        if (specs.isEmpty()) return device;
        try {
            return Filters.apply(device, specs);
        } catch (IllegalArgumentException | IOException e) {
            try {
                device.close();
            } catch (IOException | RuntimeException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw new RefusedOnceOpen(option + ": " + Main.message(e));
        }
    }

    /** Runs the copy with progress and the report; a failure or Ctrl-C removes a destination file it created. */
    private int guarded(String from, String to, long size, int requestSize, Body body) {
        try {
            if (options.verbose) {
                boolean stream = options.source.isStream() || options.destination.isStream();
                err.printf(Locale.ROOT, "pagewise copy: %s -> %s, %s, %s of %s%n", from, to,
                        size < 0 ? "size unknown until the input ends" : Main.bytes(size),
                        stream ? "one request at a time" : options.copy.requests() + " requests",
                        Main.bytes(requestSize));
            }
            if (options.progress) {
                reporter = ProgressReporter.open(options.progressFd, err);
                options.copy.progress(reporter);
            }
            CopyResult result = body.run();
            data.flush();
            if (reporter != null) reporter.finish();
            if (options.verbose) report(result);
            return 0;
        } catch (Copier.CopyCancelledException e) {
            if (reporter != null) reporter.finish();
            err.println("pagewise copy: interrupted: " + e.getMessage());
            discardUnfinishedDestination(false);
            return 130;
        } catch (IOException | RuntimeException e) {
            if (reporter != null) reporter.finish();
            err.println("pagewise copy: " + Main.message(e));
            // The size and read-only checks fail before any request: the destination is as it was.
            discardUnfinishedDestination(e instanceof CopyException && ((CopyException) e).offset() < 0
                    && bytesDone.getAsLong() == 0);
            return 1;
        }
    }

    /**
     * After a failed or interrupted copy (the destination is closed by then): a file this copy created is
     * removed, so that nothing that looks like a finished image is left; a file that existed is kept.
     */
    private void discardUnfinishedDestination(boolean untouched) {
        if (destinationFile == null || discarded) return;
        discarded = true;
        if (!destinationCreated) {
            err.println("pagewise copy: kept " + destinationFile + ", which existed before the copy: "
                    + (untouched ? "the copy stopped before writing to it" : "it is only partly copied"));
            return;
        }
        try {
            Files.deleteIfExists(destinationFile);
            err.println("pagewise copy: removed " + destinationFile + ", which this copy had created");
        } catch (IOException e) {
            err.println("pagewise copy: could not remove the unfinished " + destinationFile + ": " + Main.message(e));
        }
    }

    private BlockDevice openDestination(Endpoint destination, long sourceSize) throws IOException {
        switch (destination.kind()) {
            case DISCARD: return SyntheticDevices.discard();
            case NBD: return NbdDevice.connect(destination.text(), options.connections);
            case FILE: {
                if (options.changed != null && !Files.exists(Path.of(destination.text()))) {
                    throw new NoSuchFileException(destination.text(), null, "no such file; --changed=" + options.changed
                            + " updates an earlier full copy (make one first, without --changed)");
                }
                // A missing file is created, sparse and as large as the source, and then known to read as zeros.
                FileDevice file = FileDevice.openOrCreate(Path.of(destination.text()), options.dstCache, sourceSize);
                destinationFile = file.file().path();
                destinationCreated = file.created();
                return file;
            }
            default: throw new IllegalStateException(destination.kind() + " is not a destination");
        }
    }

    private void report(CopyResult r) {
        double seconds = r.nanos() / 1e9;
        err.printf(Locale.ROOT, "pagewise copy: %s in %.2f s (%s/s): %s written, %s zeroed, %s already zero%n",
                Main.bytes(r.size()), seconds, Main.bytes((long) (r.size() / Math.max(seconds, 1e-9))),
                Main.bytes(r.dataBytes()), Main.bytes(r.zeroedBytes()), Main.bytes(r.skippedBytes()));
        if (options.changed != null) {
            err.printf(Locale.ROOT, "pagewise copy: --changed=%s: %s unchanged, not read%n", options.changed,
                    Main.bytes(r.size() - r.dataBytes() - r.zeroedBytes() - r.skippedBytes()));
        }
    }

}

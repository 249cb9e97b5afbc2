package io.pagewise.cli;

import io.pagewise.CacheMode;
import io.pagewise.copy.Copier;
import io.pagewise.copy.CopyOptions;
import io.pagewise.copy.CopyResult;
import io.pagewise.device.BlockDevice;
import io.pagewise.devices.FileDevice;
import io.pagewise.devices.NbdDevice;
import io.pagewise.devices.SyntheticDevices;
import io.pagewise.nbd.NbdUri;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/** {@code pagewise copy}: copies between files, block devices and NBD exports with {@link Copier}. */
public final class CopyCommand {
    static final String USAGE = String.join("\n",
            "usage: pagewise copy [OPTIONS] SRC DST",
            "",
            "SRC: FILE or block device, nbd://HOST[:PORT]/EXPORT, nbd+unix:///EXPORT?socket=PATH, pattern:SIZE, zero:SIZE;",
            "     nbds:// and nbds+unix:// for TLS, with ?tls-certificates=DIR (ca-cert.pem, optional client-cert.pem),",
            "     &tls-hostname=NAME (the name to check), &tls-verify-peer=false (no check of the server)",
            "DST: FILE or block device (a missing file is created with the source's size), an NBD URI, null:",
            "",
            "  --src-cache=MODE          cache mode for a source file (default evict: leaves the page cache as it was)",
            "  --dst-cache=MODE          cache mode for a destination file (default evict)",
            "  --connections=N           NBD connections per export when the server allows multi-conn (default 4)",
            "  --requests=N              requests in flight (default 16)",
            "  --request-size=SIZE       bytes per request (default 256K; K, M suffixes)",
            "  --sparse=BYTES            turn all-zero blocks of this size into holes (default 4096; 0: off;",
            "                            else at least 512)",
            "  --destination-is-zero     the destination already reads as zeros: skip zero ranges",
            "  --target-is-zero          the same (nbdcopy accepts both names)",
            "  --allocated               allocate every byte: zero ranges become allocated zeros, not holes",
            "  --flush                   flush the destination at the end",
            "  --progress[=FD]           progress bar on stderr, or \"N/100\" lines written to file descriptor FD",
            "  -v, --verbose             say what is copied and how it went");

    private CopyCommand() {}

    static final class Options {
        CacheMode srcCache = defaultMode();
        CacheMode dstCache = defaultMode();
        int connections = 4;
        final CopyOptions copy = new CopyOptions();
        boolean progress;
        Integer progressFd;
        boolean verbose;
        Endpoint source;
        Endpoint destination;
    }

    /** What a SRC or DST argument names, checked while parsing so that a mistake in it is a usage error. */
    private record Endpoint(Kind kind, String text, long size) {
        enum Kind { FILE, NBD, PATTERN, ZERO, DISCARD }

        static Endpoint parse(String text, boolean source) throws UsageException {
            String role = source ? "SRC" : "DST";
            if (text.equals("null:")) {
                if (source) throw new UsageException("null: can only be a destination (DST), not SRC");
                return new Endpoint(Kind.DISCARD, text, 0);
            }
            for (Kind synthetic : new Kind[] {Kind.PATTERN, Kind.ZERO}) {
                String prefix = synthetic.name().toLowerCase(Locale.ROOT) + ":";
                if (!text.startsWith(prefix)) continue;
                if (!source) throw new UsageException(prefix + "SIZE can only be a source (SRC), not DST");
                try {
                    return new Endpoint(synthetic, text, Arguments.size(prefix, text.substring(prefix.length())));
                } catch (UsageException e) {
                    throw new UsageException(role + " " + text + ": expected " + prefix + "SIZE, a size such as 64K, 512M or 1G");
                }
            }
            if (NbdUri.looksLikeUri(text)) {
                try {
                    NbdUri.parse(text);
                } catch (IllegalArgumentException e) {
                    throw new UsageException(role + ": " + e.getMessage());
                }
                return new Endpoint(Kind.NBD, text, 0);
            }
            return new Endpoint(Kind.FILE, text, 0);
        }
    }

    /** EVICT leaves the page cache as it found it; without the native library, the buffered default. */
    private static CacheMode defaultMode() {
        return CacheMode.EVICT.isAvailable() ? CacheMode.EVICT : CacheMode.WRITEBACK;
    }

    /** Runs {@code copy} with the arguments after the command name; returns the exit status. */
    public static int run(List<String> args, PrintStream out, PrintStream err) {
        Options options;
        try {
            options = parse(args);
        } catch (UsageException | IllegalArgumentException e) {
            err.println("pagewise copy: " + e.getMessage());
            err.println("usage: pagewise copy [OPTIONS] SRC DST   (pagewise copy --help for the options)");
            return 2;
        }
        if (options == null) {
            out.println(USAGE);
            return 0;
        }
        return new Copying(options, err).run();
    }

    static Options parse(List<String> args) throws UsageException {
        Options o = new Options();
        boolean positionalOnly = false;
        for (int i = 0; i < args.size(); i++) {
            String arg = args.get(i);
            if (positionalOnly || !arg.startsWith("-") || arg.equals("-")) {
                if (o.source == null) o.source = Endpoint.parse(arg, true);
                else if (o.destination == null) o.destination = Endpoint.parse(arg, false);
                else throw new UsageException("more than SRC and DST given ('" + arg + "')");
                continue;
            }
            switch (arg) {
                case "--": positionalOnly = true; continue;
                case "-h": case "--help": return null;
                case "-v": case "--verbose": o.verbose = true; continue;
                case "--progress": o.progress = true; continue;
                case "--flush": o.copy.flush(true); continue;
                case "--allocated": o.copy.allocated(true); continue;
                case "--destination-is-zero": case "--target-is-zero": o.copy.destinationIsZero(true); continue;
                default: break;
            }
            Arguments.Option option = Arguments.option(args, i, CopyCommand::takesValue);
            i = option.next();
            String name = option.name();
            String value = option.value();
            switch (name) {
                case "--src-cache": o.srcCache = Arguments.cacheMode(name, value); break;
                case "--dst-cache": o.dstCache = Arguments.cacheMode(name, value); break;
                case "--connections": o.connections = Arguments.integer(name, value, 1, 64); break;
                case "--requests": o.copy.requests(Arguments.integer(name, value, 1, 1024)); break;
                case "--request-size": o.copy.requestSize(boundedSize(name, value, 512, 64 << 20)); break;
                case "--sparse": {
                    int block = boundedSize(name, value, 0, 64 << 20);
                    if (block != 0 && block < 512) throw new UsageException(name + "=" + value + ": expected 0 or at least 512");
                    o.copy.sparseBlock(block);
                    break;
                }
                case "--progress":
                    o.progress = true;
                    o.progressFd = Arguments.integer(name, value, 0, 1 << 20);
                    if (!Files.exists(Path.of("/proc/self/fd/" + o.progressFd))) {
                        throw new UsageException(name + "=" + value + ": file descriptor " + value + " is not open");
                    }
                    break;
                default:
                    throw new UsageException("unknown option '" + name + "'");
            }
        }
        if (o.source == null || o.destination == null) throw new UsageException("SRC and DST are both needed");
        return o;
    }

    private static boolean takesValue(String option) {
        switch (option) {
            case "--src-cache": case "--dst-cache": case "--connections": case "--requests": case "--request-size":
            case "--sparse":
                return true;
            default:
                return false;
        }
    }

    private static int boundedSize(String name, String value, int min, int max) throws UsageException {
        long size = Arguments.size(name, value);
        if (size < min || size > max) {
            throw new UsageException(name + "=" + value + ": expected " + Main.bytes(min) + " to " + Main.bytes(max));
        }
        return (int) size;
    }

    /** One run of the command: opens the endpoints, copies, reports. */
    private static final class Copying {
        private final Options options;
        private final PrintStream err;
        private final Copier copier;
        private final CountDownLatch finished = new CountDownLatch(1);
        private ProgressReporter reporter;
        /** The destination when it is a file, for the clean-up after a failure. */
        private FileDevice destinationFile;

        Copying(Options options, PrintStream err) {
            this.options = options;
            this.err = err;
            this.copier = new Copier(options.copy);
        }

        int run() {
            Thread stopOnSignal = new Thread(this::stopAndWait, "pagewise-copy-interrupt");
            Runtime.getRuntime().addShutdownHook(stopOnSignal);
            try {
                return copy();
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
            copier.cancel();
            try {
                finished.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        private int copy() {
            BlockDevice source;
            try {
                source = openSource(options.source);
            } catch (IOException | IllegalArgumentException e) {
                err.println("pagewise copy: cannot open source " + options.source.text() + ": " + message(e));
                return 1;
            }
            try (BlockDevice src = source) {
                BlockDevice destination;
                try {
                    destination = openDestination(options.destination, src.size());
                } catch (IOException | IllegalArgumentException e) {
                    err.println("pagewise copy: cannot open destination " + options.destination.text() + ": " + message(e));
                    return 1;
                }
                destinationFile = destination instanceof FileDevice ? (FileDevice) destination : null;
                try (BlockDevice dst = destination) {
                    if (options.verbose) {
                        // The devices' own descriptions: an NBD export's says how many connections it got.
                        err.printf(Locale.ROOT, "pagewise copy: %s -> %s, %s, %d requests of %s%n", src, dst,
                                Main.bytes(src.size()), options.copy.requests(), Main.bytes(copier.requestSize(src, dst)));
                    }
                    if (options.progress) {
                        reporter = ProgressReporter.open(options.progressFd, err);
                        options.copy.progress(reporter);
                    }
                    CopyResult result = copier.copy(src, dst);
                    if (reporter != null) reporter.finish();
                    if (options.verbose) report(result);
                    return 0;
                }
            } catch (Copier.CopyCancelledException e) {
                if (reporter != null) reporter.finish();
                err.println("pagewise copy: interrupted: " + e.getMessage());
                discardUnfinishedDestination();
                return 130;
            } catch (IOException | RuntimeException e) {
                if (reporter != null) reporter.finish();
                err.println("pagewise copy: " + message(e));
                discardUnfinishedDestination();
                return 1;
            }
        }

        /**
         * After a failed or interrupted copy (the destination is closed by then): a file this copy created is
         * removed, so that nothing that looks like a finished image is left; a file that existed is kept.
         */
        private void discardUnfinishedDestination() {
            if (destinationFile == null) return;
            Path path = destinationFile.file().path();
            if (!destinationFile.created()) {
                err.println("pagewise copy: kept " + path + ", which existed before the copy: it is only partly copied");
                return;
            }
            try {
                Files.deleteIfExists(path);
                err.println("pagewise copy: removed " + path + ", which this copy had created");
            } catch (IOException e) {
                err.println("pagewise copy: could not remove the unfinished " + path + ": " + message(e));
            }
        }

        private BlockDevice openSource(Endpoint source) throws IOException {
            switch (source.kind()) {
                case PATTERN: return SyntheticDevices.pattern(source.size());
                case ZERO: return SyntheticDevices.zero(source.size());
                case NBD: return NbdDevice.connect(source.text(), options.connections);
                case FILE: return FileDevice.open(Path.of(source.text()), options.srcCache, StandardOpenOption.READ);
                default: throw new IllegalStateException(source.kind() + " is not a source");
            }
        }

        private BlockDevice openDestination(Endpoint destination, long sourceSize) throws IOException {
            switch (destination.kind()) {
                case DISCARD: return SyntheticDevices.discard();
                case NBD: return NbdDevice.connect(destination.text(), options.connections);
                case FILE:
                    // A missing file is created, sparse and as large as the source, and then known to read as zeros.
                    return FileDevice.openOrCreate(Path.of(destination.text()), options.dstCache, sourceSize);
                default: throw new IllegalStateException(destination.kind() + " is not a destination");
            }
        }

        private void report(CopyResult r) {
            double seconds = r.nanos() / 1e9;
            err.printf(Locale.ROOT, "pagewise copy: %s in %.2f s (%s/s): %s written, %s zeroed, %s already zero%n",
                    Main.bytes(r.size()), seconds, Main.bytes((long) (r.size() / Math.max(seconds, 1e-9))),
                    Main.bytes(r.dataBytes()), Main.bytes(r.zeroedBytes()), Main.bytes(r.skippedBytes()));
        }
    }

    private static String message(Throwable e) {
        String text = e.getMessage();
        if (e instanceof java.nio.file.NoSuchFileException && text != null && !text.contains(":")) {
            return text + ": no such file";
        }
        return text == null ? e.toString() : text;
    }
}

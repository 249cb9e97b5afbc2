package io.pagewise.cli;

import io.pagewise.CacheMode;
import io.pagewise.copy.Copier;
import io.pagewise.copy.CopyOptions;
import io.pagewise.filters.Filters;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** {@code pagewise copy}: copies between files, block devices, NBD exports and streams with {@link Copier}. */
public final class CopyCommand {
    private static final String DESCRIPTION = String.join("\n",
            "SRC: FILE or block device, nbd://HOST[:PORT]/EXPORT, nbd+unix:///EXPORT?socket=PATH, pattern:SIZE, zero:SIZE,",
            "     - (standard input, read to its end); nbds:// and nbds+unix:// for TLS, with ?tls-certificates=DIR",
            "     (ca-cert.pem, optional client-cert.pem), &tls-hostname=NAME (the name to check),",
            "     &tls-verify-peer=false (no check of the server)",
            "DST: FILE or block device (a missing file is created with the source's size), an NBD URI, null:,",
            "     - (standard output)",
            "A SRC or DST that starts with SCHEME: is a URI, never a file: give a file whose name has a colon as",
            "./NAME. A FILE that starts with a qcow2, VMDK, VHDX or LUKS signature is refused (see --force-raw).");

    /** Every option of copy, once: the usage, the parsing and (checked by a test) docs/COPY.md come from it. */
    static final OptionTable<Options> TABLE = new OptionTable<>("usage: pagewise copy [OPTIONS] SRC DST", DESCRIPTION,
            List.of(
            CliOption.value("--src-cache", "MODE", "cache mode for a source file (default evict: leaves the page cache"
                    + " as it was)", (o, name, value) -> o.srcCache = Arguments.cacheMode(name, value)),
            CliOption.value("--dst-cache", "MODE", "cache mode for a destination file (default evict)",
                    (o, name, value) -> o.dstCache = Arguments.cacheMode(name, value)),
            CliOption.value("-C, --connections", "N", "NBD connections per export when the server allows multi-conn"
                    + " (default 4)", (o, name, value) -> o.connections = Arguments.integer(name, value, 1, 64)),
            CliOption.value("-R, --requests", "N", "requests in flight (default 16; a copy from or to - makes one at a"
                    + " time)", (o, name, value) -> o.copy.requests(Arguments.integer(name, value, 1, 1024))),
            CliOption.value("--request-size", "SIZE", "bytes per request (default 256K; K, M suffixes)",
                    (o, name, value) -> o.copy.requestSize(boundedSize(name, value, 512, 64 << 20))),
            CliOption.value("-S, --sparse", "BYTES", "all-zero blocks of this size become holes (default 4096; 0: off;"
                    + " else at least 512)", (o, name, value) -> {
                        int block = boundedSize(name, value, 0, 64 << 20);
                        if (block != 0 && block < 512) {
                            throw new UsageException(Arguments.shown(name, value) + ": expected 0 or at least 512");
                        }
                        o.copy.sparseBlock(block);
                    }),
            CliOption.flag("--destination-is-zero, --target-is-zero", "the destination already reads as zeros: skip"
                    + " zero ranges (nbdcopy's names)", (o, name, value) -> o.copy.destinationIsZero(true)),
            CliOption.flag("--allocated", "allocate every byte: zero ranges become allocated zeros, not holes",
                    (o, name, value) -> o.copy.allocated(true)),
            CliOption.flag("--flush", "flush the destination at the end", (o, name, value) -> o.copy.flush(true)),
            CliOption.flag("--force-raw", "copy from or into a FILE that starts with a qcow2, VMDK, VHDX or LUKS"
                    + " signature as raw bytes, instead of refusing it", (o, name, value) -> o.forceRaw = true),
            CliOption.optionalValue("--checksum", "DIGEST", "print the blkhash checksum of what is copied, as blksum"
                    + " and pagewise checksum print it (digest sha256 by default)",
                    (o, name, value) -> o.copy.checksum(Arguments.blockHash(name, value == null ? "sha256" : value))),
            CliOption.value("--changed", "NAME", "incremental copy: only the ranges the dirty bitmap NAME of SRC (an NBD"
                    + " export: pagewise serve --bitmap, qemu-nbd -B) marks changed, into an existing DST of SRC's size;"
                    + " not with --checksum or --destination-is-zero",
                    (o, name, value) -> o.changed = bitmapName(name, value)),
            CliOption.value("--filter", "NAME[:KEY=VALUE,...]", "wrap the source (SRC) in a filter ("
                    + String.join(", ", Filters.names()) + "); repeatable, the first given is nearest the copy",
                    (o, name, value) -> o.sourceFilters.add(Arguments.filter(name, value))),
            CliOption.value("--dst-filter", "NAME[:KEY=VALUE,...]", "wrap the destination (DST) in a filter, as"
                    + " --filter does the source", (o, name, value) -> o.destinationFilters.add(Arguments.filter(name, value))),
            CliOption.optionalValue("-p, --progress", "FD", "progress bar on stderr, or \"N/100\" lines written to file"
                    + " descriptor FD", (o, name, value) -> {
                        o.progress = true;
                        if (value != null) o.progressFd = progressFd(name, value);
                    }),
            CliOption.flag("-v, --verbose", "say what is copied and how it went", (o, name, value) -> o.verbose = true)),
            CopyCommand::operand, "").checkingWordsAfterOptions(CopyCommand::wordAfterOption);

    static final String USAGE = TABLE.usage();

    private CopyCommand() {}

    static final class Options {
        CacheMode srcCache = defaultMode();
        CacheMode dstCache = defaultMode();
        int connections = 4;
        final CopyOptions copy = new CopyOptions();
        boolean progress;
        Integer progressFd;
        boolean verbose;
        /** --force-raw: a FILE that starts with a container's signature is copied as its bytes, not refused. */
        boolean forceRaw;
        Endpoint source;
        Endpoint destination;
        /** --changed: the dirty bitmap of SRC whose changed ranges alone are copied, or null. */
        String changed;
        /** --filter and --dst-filter specs, in the order given: the first is nearest the copy. */
        final List<String> sourceFilters = new ArrayList<>();
        final List<String> destinationFilters = new ArrayList<>();
    }

    /** EVICT leaves the page cache as it found it; without the native library, the buffered default. */
    private static CacheMode defaultMode() {
        return CacheMode.EVICT.isAvailable() ? CacheMode.EVICT : CacheMode.WRITEBACK;
    }

    /**
     * Runs {@code copy} with the arguments after the command name, and this process's standard input for SRC
     * {@code -}; out takes the help and DST {@code -}.
     *
     * @param args the arguments
     * @param out  where the help and DST {@code -} go
     * @param err  messages
     * @return the exit status
     */
    public static int run(List<String> args, PrintStream out, PrintStream err) {
        return run(args, System.in, out, out, err);
    }

    /**
     * Runs {@code copy} with the arguments after the command name; returns the exit status.
     *
     * @param args the arguments
     * @param in   what SRC {@code -} reads
     * @param data where DST {@code -} writes
     * @param out  where the help goes
     * @param err  messages
     * @return the exit status
     */
    public static int run(List<String> args, InputStream in, OutputStream data, PrintStream out, PrintStream err) {
        Options options;
        try {
            options = parse(args);
        } catch (UsageException | IllegalArgumentException e) {
            return usageError(err, e.getMessage());
        }
        if (options == null) {
            out.println(USAGE);
            return 0;
        }
        return new CopyRun(options, in, data, err).run();
    }

    static int usageError(PrintStream err, String message) {
        err.println("pagewise copy: " + message);
        err.println(TABLE.synopsis() + "   (pagewise copy --help for the options)");
        return 2;
    }

    static Options parse(List<String> args) throws UsageException {
        Options o = new Options();
        if (!TABLE.parse(args, o)) return null;
        if (o.source == null || o.destination == null) throw new UsageException("SRC and DST are both needed");
        if (o.source.sameAs(o.destination)) {
            throw new UsageException("SRC and DST are the same " + (o.source.kind() == Endpoint.Kind.NBD ? "export" : "file")
                    + ": " + o.source.text() + (o.source.text().equals(o.destination.text()) ? "" : " and " + o.destination.text()));
        }
        if (o.source.isStream() && o.destination.isStream()) {
            throw new UsageException("SRC and DST are both - : one of them must be a file, device or NBD export");
        }
        if (o.source.isStream() && !o.sourceFilters.isEmpty()) {
            throw new UsageException("--filter applies to a source device, and SRC is - (standard input)");
        }
        if ((o.source.isStream() || o.destination.isStream()) && o.copy.checksum() != null) {
            throw new UsageException("--checksum needs SRC and DST that are files, devices or NBD exports, not -");
        }
        if (o.destination.isStream() && !o.destinationFilters.isEmpty()) {
            throw new UsageException("--dst-filter applies to a destination device, and DST is - (standard output)");
        }
        if (o.changed != null) {
            if (o.source.kind() != Endpoint.Kind.NBD) {
                throw new UsageException("--changed=" + o.changed + " reads a dirty bitmap over NBD: SRC must be an NBD"
                        + " URI, not " + o.source.text());
            }
            if (o.destination.kind() != Endpoint.Kind.FILE && o.destination.kind() != Endpoint.Kind.NBD) {
                throw new UsageException("--changed=" + o.changed + " updates an earlier copy: DST must be a file,"
                        + " block device or NBD export, not " + o.destination.text());
            }
            if (o.copy.checksum() != null) {
                throw new UsageException("--changed cannot be combined with --checksum: an incremental copy reads only"
                        + " the changes; run pagewise checksum on DST after it");
            }
            if (o.copy.destinationIsZero()) {
                throw new UsageException("--changed cannot be combined with --destination-is-zero: the destination"
                        + " holds an earlier copy, and zeroed ranges must be written");
            }
        }
        return o;
    }

    /** A --changed NAME: not empty, and no longer than a meta context name allows. */
    private static String bitmapName(String name, String value) throws UsageException {
        if (value.isEmpty()) throw new UsageException(name + " needs the NAME of a dirty bitmap");
        if (value.getBytes(java.nio.charset.StandardCharsets.UTF_8).length > 4096 - 18) {
            throw new UsageException(name + ": the bitmap name is too long for an NBD meta context");
        }
        return value;
    }

    /**
     * A SRC or DST that came right after --checksum or --progress without =, and that would be a good value for it:
     * refused when it cannot be SRC (no such file) or would be a new DST file, else the copy would read or write a
     * file named like the value.
     */
    private static void wordAfterOption(Options o, CliOption<Options> option, String name, String word)
            throws UsageException {
        if (option.arity() != CliOption.Arity.OPTIONAL) return;
        Endpoint endpoint = word.equals(o.source.text()) ? o.source : o.destination;
        if (endpoint == null || endpoint.kind() != Endpoint.Kind.FILE) return;
        try {
            if (Files.exists(Path.of(word))) return;
            option.apply(new Options(), name, word);
        } catch (UsageException | java.nio.file.InvalidPathException notAValue) {
            return;
        }
        throw new UsageException("did you mean " + name + "=" + word + "? ('" + word + "' after " + name + " would be "
                + (endpoint == o.source ? "SRC, and there is no such file" : "DST, a new file") + "; " + name
                + " takes its value only after =)");
    }

    private static void operand(Options o, String arg, boolean afterEnd) throws UsageException {
        if (o.source == null) o.source = Endpoint.parse(arg, true);
        else if (o.destination == null) o.destination = Endpoint.parse(arg, false);
        else throw new UsageException("more than SRC and DST given ('" + arg + "')");
    }

    private static int progressFd(String name, String value) throws UsageException {
        int fd = Arguments.integer(name, value, 0, 1 << 20);
        if (!Files.exists(Path.of("/proc/self/fd/" + fd))) {
            throw new UsageException(Arguments.shown(name, value) + ": file descriptor " + value + " is not open");
        }
        return fd;
    }

    private static int boundedSize(String name, String value, int min, int max) throws UsageException {
        long size = Arguments.size(name, value);
        if (size < min || size > max) {
            throw new UsageException(Arguments.shown(name, value) + ": expected " + Main.bytes(min) + " to " + Main.bytes(max));
        }
        return (int) size;
    }
}

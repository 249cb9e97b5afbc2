package io.pagewise.cli;

import io.pagewise.AccessHint;
import io.pagewise.CacheMode;
import io.pagewise.Native;
import io.pagewise.PageCache;
import io.pagewise.Residency;
import io.pagewise.StorageFile;
import io.pagewise.device.BlockDevice;
import io.pagewise.devices.FileDevice;
import io.pagewise.devices.NbdDevice;
import io.pagewise.filters.ReadOnlyFilter;
import io.pagewise.nbd.NbdServer;
import io.pagewise.nbd.NbdUri;
import io.pagewise.nbd.TlsCertificates;
import io.pagewise.nbd.TlsMode;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;

/** {@code pagewise serve}: serves a file (or a scratch demo image, or another NBD server's export) with {@link NbdServer}. */
public final class ServeCommand {
    static final String USAGE = String.join("\n",
            "usage: pagewise serve [OPTIONS] [FILE | NBD-URI]",
            "",
            "Serves FILE over NBD; without FILE, serves a sparse 1 GiB scratch image that is removed at exit.",
            "With an NBD URI (nbd://HOST[:PORT]/EXPORT, nbd+unix:///EXPORT?socket=PATH), proxies that export.",
            "",
            "  --cache=MODE              writeback (default), writethrough, unsafe, direct, directsync, evict, dontcache",
            "  --hint=HINT               normal (default), sequential, random",
            "  -r, --read-only           refuse writes, trims and zeroes",
            "  --socket=PATH             listen on a Unix socket",
            "  --port=N                  listen on TCP port N (default 10809)",
            "  --bind=ADDR               TCP address to listen on (default 127.0.0.1; 0.0.0.0 or :: for all)",
            "  --export-name=NAME        export name (default: empty)",
            "  --description=TEXT        export description shown by clients",
            "  --run=CMD                 run CMD with sh -c ($uri, $nbd, $exportname, and $unixsocket or $port set),",
            "                            stop when it exits and exit with its status",
            "  --stats[=FILE]            at exit, print request statistics and page-cache residency (default stderr)",
            "  --threads=N               threads serving each connection: its requests run at once (default 16)",
            "  --max-connections=N       connections in transmission at once (default 64); a client that",
            "                            completes its handshake beyond it is refused",
            "  --max-handshakes=N        connections in the handshake at once (default 64); beyond it the",
            "                            oldest pending handshake is dropped to make room",
            "  --max-inflight-bytes=SIZE payload bytes buffered at once (default 64M; K, M, G suffixes);",
            "                            one connection may hold a quarter of it",
            "  --handshake-timeout=SECONDS  drop clients that have not finished the handshake by then",
            "                            (default 10; 0 for no limit)",
            "  --idle-timeout=SECONDS    close connections with no request in flight and nothing received",
            "                            for that long (default 0: no limit)",
            "  --shutdown-grace=SECONDS  at exit, time left to connections to send the replies they owe",
            "                            before they are cut (default 5)",
            "  --create=SIZE             create FILE (sparse) or extend it to SIZE",
            "  --tls=MODE                off (default), on (offer TLS), require (refuse clients until they start TLS)",
            "  --tls-certificates=DIR    ca-cert.pem, server-cert.pem and server-key.pem, as nbdkit and qemu use them",
            "  --tls-verify-peer         clients must present a certificate that chains to DIR/ca-cert.pem",
            "  --tls-psk=FILE            not supported: the JDK's TLS has no pre-shared keys (use --tls-certificates)",
            "  -v, --verbose             log every request");

    private static final long DEMO_SIZE = 1L << 30;

    private ServeCommand() {}

    static final class Options {
        CacheMode cache = CacheMode.WRITEBACK;
        AccessHint hint = AccessHint.NORMAL;
        boolean readOnly;
        Path socket;
        Integer port;
        InetAddress bind;
        String exportName = "";
        String description = "";
        String run;
        boolean stats;
        Path statsFile;
        Integer threads;
        Integer maxConnections;
        Long maxInflightBytes;
        Integer handshakeTimeoutSeconds;
        Integer maxHandshakes;
        Integer idleTimeoutSeconds;
        Integer shutdownGraceSeconds;
        Long create;
        boolean verbose;
        Path file;
        /** The export to proxy, instead of a file. */
        String upstream;
        boolean cacheGiven;
        TlsMode tls = TlsMode.OFF;
        Path tlsCertificates;
        boolean tlsVerifyPeer;
    }

    /** Runs {@code serve} with the arguments after the command name; returns the exit status. */
    public static int run(List<String> args, PrintStream out, PrintStream err) {
        Options options;
        try {
            options = parse(args);
        } catch (UsageException e) {
            err.println("pagewise serve: " + e.getMessage());
            err.println("usage: pagewise serve [OPTIONS] [FILE | NBD-URI]   (pagewise serve --help for the options)");
            return 2;
        }
        if (options == null) {
            out.println(USAGE);
            return 0;
        }
        try {
            return new Serving(options, out, err).serve();
        } catch (IOException | RuntimeException e) {
            err.println("pagewise serve: " + e.getMessage());
            return 1;
        }
    }

    static Options parse(List<String> args) throws UsageException {
        Options o = new Options();
        for (int i = 0; i < args.size(); i++) {
            String arg = args.get(i);
            if (arg.equals("-h") || arg.equals("--help")) return null;
            if (arg.equals("-r") || arg.equals("--read-only")) { o.readOnly = true; continue; }
            if (arg.equals("-v") || arg.equals("--verbose")) { o.verbose = true; continue; }
            if (arg.equals("--stats")) { o.stats = true; continue; }
            if (arg.equals("--tls-verify-peer")) { o.tlsVerifyPeer = true; continue; }
            if (!arg.startsWith("-") || arg.equals("-")) {
                if (o.file != null || o.upstream != null) {
                    throw new UsageException("more than one FILE given ('" + (o.file != null ? o.file : o.upstream)
                            + "' and '" + arg + "')");
                }
                if (NbdUri.looksLikeUri(arg)) {
                    o.upstream = arg;
                } else {
                    o.file = Path.of(arg);
                }
                continue;
            }
            if (arg.equals("--")) {
                if (i + 2 < args.size()) throw new UsageException("more than one FILE given");
                if (i + 1 < args.size()) o.file = Path.of(args.get(i + 1));
                break;
            }
            Arguments.Option option = Arguments.option(args, i, ServeCommand::takesValue);
            i = option.next();
            String name = option.name();
            String value = option.value();
            switch (name) {
                case "--cache": o.cache = Arguments.cacheMode(name, value); o.cacheGiven = true; break;
                case "--hint": o.hint = hint(value); break;
                case "--socket": o.socket = Path.of(nonEmpty(name, value)); break;
                case "--port": o.port = Arguments.integer(name, value, 0, 65535); break;
                case "--bind": o.bind = address(name, nonEmpty(name, value)); break;
                case "--export-name": o.exportName = nbdString(name, value); break;
                case "--description": o.description = nbdString(name, value); break;
                case "--run": o.run = nonEmpty(name, value); break;
                case "--stats": o.stats = true; o.statsFile = Path.of(nonEmpty(name, value)); break;
                case "--threads": o.threads = Arguments.integer(name, value, 1, 1024); break;
                case "--max-connections": o.maxConnections = Arguments.integer(name, value, 1, 65536); break;
                case "--max-inflight-bytes": o.maxInflightBytes = Arguments.size(name, value); break;
                case "--handshake-timeout": o.handshakeTimeoutSeconds = Arguments.integer(name, value, 0, 86400); break;
                case "--max-handshakes": o.maxHandshakes = Arguments.integer(name, value, 1, 65536); break;
                case "--idle-timeout": o.idleTimeoutSeconds = Arguments.integer(name, value, 0, 864000); break;
                case "--shutdown-grace": o.shutdownGraceSeconds = Arguments.integer(name, value, 0, 3600); break;
                case "--create": o.create = Arguments.size(name, value); break;
                case "--tls": o.tls = tlsMode(value); break;
                case "--tls-certificates": o.tlsCertificates = Path.of(nonEmpty(name, value)); break;
                case "--tls-psk":
                    throw new UsageException("--tls-psk is not supported: the JDK's TLS has no pre-shared keys "
                            + "(see docs/SERVER.md); use --tls-certificates=DIR");
                case "--read-only": case "--verbose": case "--tls-verify-peer":
                    throw new UsageException("option " + name + " takes no value");
                default:
                    throw new UsageException("unknown option '" + name + "'");
            }
        }
        if (o.socket != null && (o.port != null || o.bind != null)) {
            throw new UsageException("--socket cannot be combined with --port or --bind");
        }
        if (o.maxInflightBytes != null && o.maxInflightBytes < 64 * 1024) {
            throw new UsageException("--max-inflight-bytes must be at least 64K");
        }
        if (o.upstream != null && (o.create != null || o.cacheGiven || o.hint != AccessHint.NORMAL)) {
            throw new UsageException("--create, --cache and --hint apply to a FILE, not to a proxied " + o.upstream);
        }
        if (o.create != null && o.file == null) throw new UsageException("--create needs a FILE");
        if (o.tls != TlsMode.OFF && o.tlsCertificates == null) {
            throw new UsageException("--tls=" + o.tls.name().toLowerCase(Locale.ROOT) + " needs --tls-certificates=DIR");
        }
        if (o.tls == TlsMode.OFF && (o.tlsCertificates != null || o.tlsVerifyPeer)) {
            throw new UsageException((o.tlsVerifyPeer ? "--tls-verify-peer" : "--tls-certificates")
                    + " needs --tls=on or --tls=require");
        }
        if (o.readOnly && o.create != null) throw new UsageException("--create cannot be combined with --read-only");
        return o;
    }

    private static boolean takesValue(String option) {
        switch (option) {
            case "--cache": case "--hint": case "--socket": case "--port": case "--bind": case "--export-name":
            case "--description": case "--run": case "--threads": case "--max-connections":
            case "--max-inflight-bytes": case "--handshake-timeout": case "--create": case "--max-handshakes":
            case "--idle-timeout": case "--shutdown-grace": case "--tls": case "--tls-certificates": case "--tls-psk":
                return true;
            default:
                return false;
        }
    }

    private static AccessHint hint(String value) throws UsageException {
        switch (value.toLowerCase(Locale.ROOT)) {
            case "normal": return AccessHint.NORMAL;
            case "sequential": return AccessHint.SEQUENTIAL;
            case "random": return AccessHint.RANDOM;
            default: throw new UsageException("--hint=" + value + ": expected normal, sequential or random");
        }
    }

    private static TlsMode tlsMode(String value) throws UsageException {
        switch (value) {
            case "off": return TlsMode.OFF;
            case "on": return TlsMode.ON;
            case "require": return TlsMode.REQUIRE;
            default: throw new UsageException("--tls=" + value + ": expected off, on or require");
        }
    }

    private static String nonEmpty(String name, String value) throws UsageException {
        if (value.isEmpty()) throw new UsageException(name + " needs a value");
        return value;
    }

    private static InetAddress address(String name, String value) throws UsageException {
        try {
            return InetAddress.getByName(value);
        } catch (UnknownHostException e) {
            throw new UsageException(name + "=" + value + ": unknown host or address");
        }
    }

    /** NBD strings (export names, descriptions) are at most 4096 bytes of UTF-8. */
    private static String nbdString(String name, String value) throws UsageException {
        int bytes = value.getBytes(StandardCharsets.UTF_8).length;
        if (bytes > 4096) throw new UsageException(name + " is " + bytes + " bytes long; NBD allows at most 4096");
        return value;
    }


    /** One run of the command: the export, the server, and everything removed at exit. */
    private static final class Serving {
        private final Options options;
        private final PrintStream out;
        private final PrintStream err;
        private final List<Path> temporary = new ArrayList<>();
        private Path file;
        /** The file served, or null when proxying. */
        private FileDevice export;
        /** What the server serves: the file, or the proxied export (behind the read-only filter with -r). */
        private BlockDevice device;
        private NbdServer server;
        private Thread hook;
        private boolean finished;
        /** Set by {@link #finish()} when the closing flush or close failed: the exit status is then not 0. */
        private volatile boolean notFlushed;
        private javax.net.ssl.SSLContext tlsContext;

        Serving(Options options, PrintStream out, PrintStream err) {
            this.options = options;
            this.out = out;
            this.err = err;
        }

        int serve() throws IOException {
            // Registered before anything exists to clean up, so that no signal can slip in unhandled.
            hook = new Thread(this::stopFromSignal, "pagewise-serve-shutdown");
            Runtime.getRuntime().addShutdownHook(hook);
            try {
                // Certificates first: a bad directory is reported before any file is created or opened.
                tlsContext = options.tls == TlsMode.OFF ? null
                        : TlsCertificates.serverContext(options.tlsCertificates, options.tlsVerifyPeer);
                if (options.upstream != null) {
                    // Up to 4 connections to the upstream server, when it allows multi-conn.
                    BlockDevice upstream = NbdDevice.connect(options.upstream, 4);
                    device = options.readOnly ? new ReadOnlyFilter(upstream) : upstream;
                } else {
                    prepareFile();
                    export = options.readOnly ? FileDevice.open(file, options.cache, StandardOpenOption.READ)
                            : FileDevice.open(file, options.cache, StandardOpenOption.READ, StandardOpenOption.WRITE);
                    if (options.hint != AccessHint.NORMAL) export.file().advise(options.hint);
                    device = export;
                }
                server = startServer();
                if (options.run != null) return runCaptive();
                announce();
                server.awaitStopped();
                finish();
                return notFlushed ? 1 : 0;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                finish();
                return 1;
            } finally {
                if (!finished) finish();
                if (hook != null) {
                    try {
                        Runtime.getRuntime().removeShutdownHook(hook);
                    } catch (IllegalStateException e) {
                        // the JVM is already shutting down; the hook is running
                    }
                }
            }
        }

        private void prepareFile() throws IOException {
            if (options.file == null) {
                Path dir = Files.createTempDirectory("pagewise-demo-");
                temporary.add(dir);
                file = dir.resolve("demo.img");
                try (StorageFile f = StorageFile.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE,
                        StandardOpenOption.CREATE_NEW)) {
                    f.resize(DEMO_SIZE);
                }
                return;
            }
            file = options.file;
            if (options.create != null) {
                try (StorageFile f = StorageFile.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE,
                        StandardOpenOption.CREATE)) {
                    if (f.size() < options.create) f.resize(options.create);
                }
            } else if (!Files.exists(file)) {
                throw new IOException(file + ": no such file (use --create=SIZE to make one)");
            }
        }

        private NbdServer startServer() throws IOException {
            NbdServer.Builder builder = NbdServer.builder()
                    .export(options.exportName, options.description, device)
                    .logger(new StderrLogger("pagewise serve: ", err, options.verbose));
            if (options.threads != null) builder.threads(options.threads);
            if (options.maxConnections != null) builder.maxConnections(options.maxConnections);
            if (options.maxInflightBytes != null) builder.maxInflightBytes(options.maxInflightBytes);
            if (options.handshakeTimeoutSeconds != null) {
                builder.handshakeTimeout(Duration.ofSeconds(options.handshakeTimeoutSeconds));
            }
            if (options.maxHandshakes != null) builder.maxHandshakes(options.maxHandshakes);
            if (options.idleTimeoutSeconds != null) builder.idleTimeout(Duration.ofSeconds(options.idleTimeoutSeconds));
            if (options.shutdownGraceSeconds != null) builder.shutdownGrace(Duration.ofSeconds(options.shutdownGraceSeconds));
            if (options.tls != TlsMode.OFF) {
                builder.tls(tlsContext, options.tls).tlsVerifyPeer(options.tlsVerifyPeer);
            }
            if (options.socket != null) {
                builder.unixSocket(options.socket);
            } else if (options.run != null && options.port == null && options.bind == null) {
                Path dir = Files.createTempDirectory("pagewise-nbd-");
                temporary.add(dir);
                builder.unixSocket(dir.resolve("nbd.sock"));
            } else {
                int port = options.port != null ? options.port : NbdServer.DEFAULT_PORT;
                builder.listen(options.bind != null ? new InetSocketAddress(options.bind, port)
                        : new InetSocketAddress("127.0.0.1", port));
            }
            try {
                return builder.start();
            } catch (IOException e) {
                throw new IOException(e.getMessage() + (options.socket == null
                        ? " (choose another with --port=N, or use --socket=PATH)" : ""), e);
            }
        }

        /** The server's URI, with the certificates directory for TLS clients when TLS is required. */
        private String uri() {
            String uri = server.uri(options.exportName);
            if (options.tls != TlsMode.REQUIRE) return uri;
            return uri + (uri.contains("?") ? "&" : "?") + "tls-certificates=" + options.tlsCertificates.toAbsolutePath();
        }

        private void announce() throws IOException {
            String uri = uri();
            if (options.upstream != null) {
                out.println("pagewise: serving " + options.upstream + " (" + Main.bytes(device.size()) + ", proxied"
                        + (device.canWrite() ? "" : ", read-only") + ") at " + uri);
            } else if (options.file == null) {
                out.println("pagewise: serving a 1 GiB scratch disk (sparse, deleted when the server stops) at");
                out.println("  " + uri);
                out.println("Try, from another terminal:");
                out.println("  nbdinfo " + uri);
                out.println("  qemu-img info " + uri);
                out.println("Stop with Ctrl-C.");
            } else {
                out.println("pagewise: serving " + file + " (" + Main.bytes(export.size()) + ", cache="
                        + export.file().cacheMode().name().toLowerCase(Locale.ROOT)
                        + (options.readOnly ? ", read-only" : "") + ") at " + uri);
            }
            out.flush();
        }

        private int runCaptive() throws IOException, InterruptedException {
            ProcessBuilder process = new ProcessBuilder("sh", "-c", options.run).inheritIO();
            String uri = uri();
            process.environment().put("uri", uri);
            process.environment().put("nbd", uri);
            process.environment().put("exportname", options.exportName);
            if (server.address() instanceof java.net.UnixDomainSocketAddress) {
                process.environment().put("unixsocket",
                        ((java.net.UnixDomainSocketAddress) server.address()).getPath().toString());
            } else {
                process.environment().put("port", String.valueOf(((InetSocketAddress) server.address()).getPort()));
            }
            Process child = process.start();
            int status = child.waitFor();
            finish();
            // The command's own failure comes first; a clean command still fails when its data was not flushed.
            return status == 0 && notFlushed ? 1 : status;
        }

        /** The JVM is stopping on SIGINT or SIGTERM: stop cleanly, and exit 0 unless the data could not be flushed. */
        private void stopFromSignal() {
            boolean ran = finish();
            if (ran) {
                out.flush();
                err.flush();
                Runtime.getRuntime().halt(notFlushed ? 1 : 0);
            }
        }

        /**
         * Stops the server, closes the export, prints statistics and removes temporary files; once. The statistics
         * come after the close, which drops what EVICT and DONTCACHE still held, so residency is what stays cached.
         * A failed closing flush (the server flushes every writable export as it stops) or close is printed with the
         * file and sets {@link #notFlushed}: writes acknowledged since the client's last FLUSH may not be durable.
         */
        private synchronized boolean finish() {
            if (finished) return false;
            finished = true;
            if (server != null) {
                try {
                    server.close();
                } catch (IOException e) {
                    notFlushed = true;
                    err.println("pagewise serve: " + served() + " could not be flushed at exit: " + e.getMessage()
                            + "; writes that no FLUSH or FUA made durable may be lost");
                }
            }
            if (device != null) {
                try {
                    device.close();
                } catch (IOException e) {
                    notFlushed = true;
                    err.println("pagewise serve: closing " + served() + " failed: " + e.getMessage()
                            + "; writes that no FLUSH or FUA made durable may be lost");
                }
            }
            if (options.stats && server != null) printStats();
            for (Path dir : temporary) deleteTree(dir);
            return true;
        }

        /** What is served, for messages: the file, or the proxied URI. */
        private Object served() {
            return options.upstream != null ? options.upstream : file;
        }

        private void printStats() {
            try (PrintStream target = options.statsFile != null
                    ? new PrintStream(new FileOutputStream(options.statsFile.toFile()), true, StandardCharsets.UTF_8)
                    : null) {
                PrintStream to = target != null ? target : err;
                to.println("pagewise serve statistics for " + (options.upstream == null && options.file == null
                        ? "the demo disk" : served()) + ":");
                server.stats().print(to);
                if (file != null && Native.isAvailable() && Files.exists(file)) {
                    Residency r = PageCache.residency(file);
                    to.printf(Locale.ROOT, "page cache: %d/%d pages resident (%.1f%%), %s%n", r.residentPages(),
                            r.totalPages(), r.percent(), Main.bytes(r.residentBytes()));
                }
                to.flush();
            } catch (IOException e) {
                err.println("pagewise serve: --stats: " + e.getMessage());
            }
        }

        private static void deleteTree(Path dir) {
            try (Stream<Path> paths = Files.walk(dir)) {
                paths.sorted(Comparator.reverseOrder()).forEach(p -> {
                    try {
                        Files.deleteIfExists(p);
                    } catch (IOException ignored) {
                        // best effort: a temp dir left behind is harmless
                    }
                });
            } catch (IOException ignored) {
                // already gone
            }
        }
    }
}

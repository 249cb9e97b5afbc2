package io.pagewise.cli;

import io.pagewise.AccessHint;
import io.pagewise.Native;
import io.pagewise.PageCache;
import io.pagewise.Residency;
import io.pagewise.StorageFile;
import io.pagewise.backup.DirtyBitmap;
import io.pagewise.backup.DirtyBitmapFilter;
import io.pagewise.device.BlockDevice;
import io.pagewise.devices.FileDevice;
import io.pagewise.devices.NbdDevice;
import io.pagewise.filters.Filters;
import io.pagewise.filters.ReadOnlyFilter;
import io.pagewise.nbd.server.NbdServer;
import io.pagewise.nbd.TlsCertificates;
import io.pagewise.nbd.TlsMode;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetSocketAddress;
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

/** One run of the command: the export, the server, and everything removed at exit. */
final class Serving {
    private final ServeCommand.Options options;
    private final PrintStream out;
    private final PrintStream err;
    private final List<Path> temporary = new ArrayList<>();
    private Path file;
    /** The file served, or null when proxying. */
    private FileDevice export;
    /** What the server serves: the file or the proxied export (behind the read-only filter with -r), under --filter. */
    private BlockDevice device;
    private NbdServer server;
    private Thread hook;
    private boolean finished;
    /** Set by {@link #finish()} when the closing flush or close failed: the exit status is then not 0. */
    private volatile boolean notFlushed;
    private javax.net.ssl.SSLContext tlsContext;
    /** The --bitmap bitmaps, open, and their files, for the announcement. */
    private final List<DirtyBitmap> bitmaps = new ArrayList<>();
    private final List<Path> bitmapFiles = new ArrayList<>();

    Serving(ServeCommand.Options options, PrintStream out, PrintStream err) {
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
            device = withBitmaps(device);
            device = filtered(device);
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

    /**
     * The --bitmap filters over the device, the innermost layer, so that every write through any --filter is
     * recorded. Each bitmap is assigned to {@link #device} as soon as it wraps it, so that a failure to open the next
     * one still closes (and saves) those already open.
     */
    private BlockDevice withBitmaps(BlockDevice base) throws IOException {
        device = base;
        for (ServeCommand.BitmapSpec spec : options.bitmaps) {
            Path bitmapFile = spec.fileFor(file);
            DirtyBitmap bitmap;
            try {
                bitmap = DirtyBitmap.open(bitmapFile, spec.name(), file, device.size(), spec.granularity());
            } catch (IOException | IllegalArgumentException e) {
                throw new IOException("--bitmap=" + spec.name() + ": " + e.getMessage(), e);
            }
            try {
                if (options.bitmapClear) bitmap.clear();
                device = new DirtyBitmapFilter(device, bitmap);
            } catch (IOException | RuntimeException e) {
                bitmap.close();
                throw e;
            }
            bitmaps.add(bitmap);
            bitmapFiles.add(bitmapFile);
        }
        return device;
    }

    /**
     * The --filter stack over the device, so that closing what is served at exit closes the filters and the device.
     * A filter that refuses its parameters is a usage mistake; the device is closed (by finish) and nothing served.
     */
    private BlockDevice filtered(BlockDevice base) throws IOException {
        if (options.filters.isEmpty()) return base;
        try {
            return Filters.apply(base, options.filters);
        } catch (IllegalArgumentException e) {
            throw new FilterSpecException("--filter: " + e.getMessage());
        }
    }

    /** A --filter the filters refused once applied: exit status 2, as for any other usage mistake. */
    static final class FilterSpecException extends IOException {
        FilterSpecException(String message) {
            super(message);
        }
    }

    private void prepareFile() throws IOException {
        if (options.file == null) {
            Path dir = Files.createTempDirectory("pagewise-demo-");
            temporary.add(dir);
            file = dir.resolve("demo.img");
            try (StorageFile f = StorageFile.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE,
                    StandardOpenOption.CREATE_NEW)) {
                f.resize(ServeCommand.DEMO_SIZE);
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
        for (int i = 0; i < bitmaps.size(); i++) {
            DirtyBitmap b = bitmaps.get(i);
            out.println("pagewise: dirty bitmap " + b.name() + " (qemu:dirty-bitmap:" + b.name() + ") in "
                    + bitmapFiles.get(i) + ": generation " + b.generation() + ", granularity " + Main.bytes(b.granularity())
                    + (b.isValid() ? "" : ", INVALID (the image changed unrecorded): it reports everything changed until"
                    + " --bitmap-clear"));
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

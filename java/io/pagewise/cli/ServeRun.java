package io.pagewise.cli;

import io.pagewise.Native;
import io.pagewise.PageCache;
import io.pagewise.Residency;
import io.pagewise.backup.DirtyBitmap;
import io.pagewise.device.BlockDevice;
import io.pagewise.device.Capability;
import io.pagewise.internal.FileErrors;
import io.pagewise.nbd.TlsMode;
import io.pagewise.nbd.server.NbdServer;
import io.pagewise.nbd.server.ServiceProcess;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;

/** One run of the command: the exports, the server, and everything removed at exit. */
final class ServeRun {
    private static final String PREFIX = "pagewise serve: ";

    private final ServeOptions options;
    private final PrintStream out;
    private final PrintStream err;
    /** Where messages go: plain lines, or with --log=journal lines with syslog severities; both on stderr. */
    private final System.Logger logger;
    /** Directories removed at exit, after the statistics: the demo disk's, and the private socket's of --run. */
    private final List<Path> temporary = new ArrayList<>();
    private NbdServer server;
    private MetricsEndpoint metrics;
    /** The --pidfile written, to remove at exit; or null. */
    private Path pidFileWritten;
    private Thread hook;
    private boolean finished;
    /** Set by {@link #finish()} when the closing flush or close failed: the exit status is then not 0. */
    private volatile boolean notFlushed;
    /** Opens the FILEs, their bitmaps and filters, and --dir's files; its bitmaps are announced at start. */
    private final ServeDevices devices;
    private final ServeExports exports;

    ServeRun(ServeOptions options, PrintStream out, PrintStream err) {
        this.options = options;
        this.out = out;
        this.err = err;
        this.logger = options.journal ? new SeverityLogger(PREFIX, err, options.verbose)
                : new StderrLogger(PREFIX, err, options.verbose);
        this.devices = new ServeDevices(options, logger);
        this.exports = new ServeExports(options, logger, devices, temporary);
    }

    /** {@return the logger messages of this run go to}, for ServeCommand's last word on a failure */
    System.Logger logger() {
        return logger;
    }

    int serve() throws IOException {
        // Registered before anything exists to clean up, so that no signal can slip in unhandled.
        hook = new Thread(this::stopFromSignal, "pagewise-serve-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        try {
            if (options.exitWithParent) ServiceProcess.exitWithParent();
            ServeServerSetup setup = new ServeServerSetup(options, logger, temporary);
            // Certificates and allow-lists first: a bad one is reported before any file is created or opened.
            NbdServer.Builder builder = setup.configure();
            if (options.statsFile != null) checkStatsFile(options.statsFile);
            ServerSocketChannel activated = setup.activatedSocket();
            exports.addTo(builder); // when it fails, finish() closes what was opened
            if (options.defaultExport != null) builder.defaultExport(options.defaultExport);
            builder.allocationDepth(options.allocationDepth);
            server = setup.start(builder, activated);
            exports.keepCreatedFiles();
            if (options.metrics != null) metrics = MetricsEndpoint.start(options.metrics, server::metrics);
            if (options.pidFile != null) {
                ServiceProcess.writePidFile(options.pidFile);
                pidFileWritten = options.pidFile;
            }
            // Last: the sockets are bound and the FILEs open, as root; what --dir opens later is opened as USER.
            if (options.user != null) dropPrivileges();
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
            exports.deleteCreatedFiles();
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
     * A mistake found once serving began (a --filter's parameters, a container FILE without --force-raw, listen
     * options under socket activation): exit status 2, as for any other usage mistake.
     */
    static class UsageProblem extends IOException {
        UsageProblem(String message) {
            super(message);
        }
    }

    /** A --filter the filters refused once applied. */
    static final class FilterSpecException extends UsageProblem {
        FilterSpecException(String message) {
            super(message);
        }
    }

    private void dropPrivileges() throws IOException {
        String as = "--user=" + options.user + (options.group != null ? " --group=" + options.group : "");
        try {
            ServiceProcess.dropPrivileges(options.user, options.group);
        } catch (IllegalArgumentException | IOException e) {
            throw new IOException(as + ": " + Main.message(e), e);
        }
    }

    /** The server's URI for the main export. */
    private String uri() {
        return uri(exports.mainExport());
    }

    /** The server's URI for an export, with the certificates directory for TLS clients when TLS is required. */
    private String uri(String name) {
        String uri = server.uri(name);
        if (options.tls != TlsMode.REQUIRE) return uri;
        return uri + (uri.contains("?") ? "&" : "?") + "tls-certificates=" + options.tlsCertificates.toAbsolutePath();
    }

    private void announce() throws IOException {
        String uri = uri();
        if (options.upstream != null) {
            BlockDevice proxied = exports.proxied();
            out.println("pagewise: serving " + options.upstream + " (" + Main.bytes(proxied.size()) + ", proxied"
                    + (proxied.capabilities().has(Capability.WRITE) ? "" : ", read-only") + ") at " + uri);
        } else if (options.files.isEmpty() && options.dir == null) {
            out.println("pagewise: serving a 1 GiB scratch disk (sparse, deleted when the server stops) at");
            out.println("  " + uri);
            out.println("Try, from another terminal:");
            out.println("  nbdinfo " + uri);
            out.println("  qemu-img info " + uri);
            out.println("Stop with Ctrl-C.");
        } else {
            String readOnly = options.readOnly ? ", read-only" : "";
            for (ServeExports.Served s : exports.files()) {
                out.println("pagewise: serving " + s.file() + " (" + Main.bytes(s.export().size()) + ", cache="
                        + s.export().file().cacheMode().name().toLowerCase(Locale.ROOT) + readOnly + ") at " + uri(s.name()));
            }
            if (exports.servesDirectory()) {
                out.println("pagewise: serving the files of " + options.dir + " (cache="
                        + options.cache.name().toLowerCase(Locale.ROOT) + readOnly + ") at " + uri("NAME"));
            }
            if (options.defaultExport != null) {
                out.println("pagewise: a client that gives no export name gets '" + options.defaultExport + "'");
            }
        }
        for (int i = 0; i < devices.bitmaps().size(); i++) {
            DirtyBitmap b = devices.bitmaps().get(i);
            out.println("pagewise: dirty bitmap " + b.name() + " (qemu:dirty-bitmap:" + b.name() + ") in "
                    + devices.bitmapFiles().get(i) + ": generation " + b.generation() + ", granularity " + Main.bytes(b.granularity())
                    + (b.isValid() ? "" : ", INVALID (the image changed unrecorded): it reports everything changed until"
                    + " --bitmap-clear"));
        }
        if (metrics != null) out.println("pagewise: metrics at " + metrics.url());
        out.flush();
    }

    private int runCaptive() throws IOException, InterruptedException {
        ProcessBuilder process = new ProcessBuilder().inheritIO();
        String uri = uri();
        process.environment().put("uri", uri);
        process.environment().put("nbd", uri);
        process.environment().put("exportname", exports.mainExport());
        if (metrics != null) process.environment().put("metrics", metrics.url());
        if (server.address() instanceof java.net.UnixDomainSocketAddress) {
            process.environment().put("unixsocket",
                    ((java.net.UnixDomainSocketAddress) server.address()).getPath().toString());
        } else {
            process.environment().put("port", String.valueOf(((InetSocketAddress) server.address()).getPort()));
        }
        int status = ServeCaptive.start(process, options.run, logger).waitFor();
        finish();
        // The command's own failure comes first; a clean command still fails when its data was not flushed.
        return status == 0 && notFlushed ? 1 : status;
    }

    /**
     * The JVM is stopping on SIGINT, SIGTERM or SIGHUP: stop cleanly, and exit 0 unless the data could not be flushed.
     * With --run the signal came before the command ran (while it runs, {@link ServeCaptive} takes the signals):
     * the JVM then exits 128 + the signal, since the command's work was not done.
     */
    private void stopFromSignal() {
        boolean ran = finish();
        if (ran) {
            out.flush();
            err.flush();
            if (options.run == null) Runtime.getRuntime().halt(notFlushed ? 1 : 0);
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
        if (metrics != null) metrics.close();
        if (server != null) {
            try {
                server.close();
            } catch (IOException e) {
                notFlushed = true;
                logger.log(System.Logger.Level.ERROR, exports.whatIsServed() + " could not be flushed at exit: "
                        + e.getMessage() + "; writes that no FLUSH or FUA made durable may be lost");
            }
        }
        if (!exports.close()) notFlushed = true;
        if (pidFileWritten != null) {
            try {
                Files.deleteIfExists(pidFileWritten);
            } catch (IOException e) {
                logger.log(System.Logger.Level.WARNING, "cannot remove the pid file " + pidFileWritten + ": "
                        + FileErrors.reason(e));
            }
        }
        if (options.stats && server != null) printStats();
        for (Path dir : temporary) deleteTree(dir);
        return true;
    }

    /** Creates (or empties) the --stats file now, so that a path that cannot be written is refused at start, not at exit. */
    private static void checkStatsFile(Path file) throws IOException {
        try {
            Files.newOutputStream(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                    StandardOpenOption.TRUNCATE_EXISTING).close();
        } catch (IOException e) {
            throw new IOException("--stats: " + Main.message(e), e);
        }
    }

    private void printStats() {
        try (PrintStream target = options.statsFile != null
                ? new PrintStream(new FileOutputStream(options.statsFile.toFile()), true, StandardCharsets.UTF_8)
                : null) {
            PrintStream to = target != null ? target : err;
            to.println("pagewise serve statistics for " + exports.whatIsServed() + ":");
            server.stats().print(to);
            for (ServeExports.Served s : exports.files()) {
                if (!Native.isAvailable() || !Files.exists(s.file())) continue;
                Residency r = PageCache.residency(s.file());
                to.printf(Locale.ROOT, "page cache%s: %d/%d pages resident (%.1f%%), %s%n",
                        exports.files().size() > 1 ? " of " + s.file() : "", r.residentPages(), r.totalPages(), r.percent(),
                        Main.bytes(r.residentBytes()));
            }
            to.flush();
        } catch (IOException e) {
            logger.log(System.Logger.Level.ERROR, "--stats: " + Main.message(e));
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

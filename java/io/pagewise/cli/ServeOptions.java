package io.pagewise.cli;

import static io.pagewise.cli.ServeArguments.*;

import io.pagewise.AccessHint;
import io.pagewise.CacheMode;
import io.pagewise.nbd.TlsMode;
import java.io.IOException;
import java.net.InetAddress;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** What serve's options say, as {@link ServeCommand#TABLE} reads them, and their checks against each other. */
final class ServeOptions {
    CacheMode cache = CacheMode.WRITEBACK;
    AccessHint hint = AccessHint.NORMAL;
    boolean readOnly;
    Path socket;
    Integer port;
    InetAddress bind;
    String exportName = "";
    String description = "";
    String run;
    /** --socket=- (nbdkit's -U -): the private socket of --run. */
    boolean privateSocket;
    /** -s, --snapshot: a temporary cow overlay nearest the FILE. */
    boolean snapshot;
    /** What the user is told before serving: a word after --stats taken as the FILE. */
    final List<String> notices = new ArrayList<>();
    boolean stats;
    Path statsFile;
    Integer threads;
    Integer maxConnections;
    Long maxInflightBytes;
    Integer handshakeTimeoutSeconds;
    Integer maxHandshakes;
    Integer idleTimeoutSeconds;
    /** --reply-timeout, or null for the server's default. */
    Integer replyTimeoutSeconds;
    Integer shutdownGraceSeconds;
    Long create;
    boolean verbose;
    /** The export to proxy, instead of a file. */
    String upstream;
    boolean cacheGiven;
    TlsMode tls = TlsMode.OFF;
    Path tlsCertificates;
    boolean tlsVerifyPeer;
    /** --filter specs, in the order given: the first is nearest the client. */
    final List<String> filters = new ArrayList<>();
    /** --bitmap specs, in the order given; each records below every --filter, next to the file. */
    final List<BitmapSpec> bitmaps = new ArrayList<>();
    /** --bitmap-clear=NAME, each; bitmapClearAll for --bitmap-clear alone. */
    java.util.Set<String> bitmapClear = new java.util.LinkedHashSet<>();
    boolean bitmapClearAll;

    /** Whether --bitmap-clear asks for a new generation of the bitmap name. */
    boolean clears(String name) {
        return bitmapClearAll || bitmapClear.contains(name);
    }
    // The operators' options (several exports, service, metrics, access control), kept together.
    boolean exportNameGiven;
    /** The FILEs, each with its export name (null: from the file name, or "" for a lone FILE), in order. */
    final List<FileOperand> files = new ArrayList<>();
    Path dir;
    String defaultExport;
    boolean allocationDepth;
    boolean forceRaw;
    Path pidFile;
    boolean exitWithParent;
    /** --log=journal: severity prefixes on stderr. */
    boolean journal;
    java.net.InetSocketAddress metrics;
    String jmx;
    final List<String> allow = new ArrayList<>();
    final List<String> allowUsers = new ArrayList<>();
    Path tlsAuthz;
    String user;
    String group;

    /** A FILE operand and the export name given with it (NAME=FILE), or null when none was given. */
    record FileOperand(String name, Path path) {}

    /**
     * Checks the options against each other once all are read, and completes what follows from them: --snapshot's
     * cow filter, and each FILE's export name.
     */
    void complete() throws UsageException {
        if ((socket != null || privateSocket) && (port != null || bind != null)) {
            throw new UsageException("--socket cannot be combined with --port or --bind");
        }
        if (maxInflightBytes != null && maxInflightBytes < 256 * 1024) {
            throw new UsageException("--max-inflight-bytes must be at least 256K: one connection may hold a quarter"
                    + " of it, which must fit a 64K payload buffer");
        }
        if (upstream != null && (create != null || cacheGiven || hint != AccessHint.NORMAL)) {
            throw new UsageException("--create, --cache and --hint apply to a FILE, not to a proxied " + upstream);
        }
        if (create != null && files.isEmpty()) throw new UsageException("--create needs a FILE");
        if (privateSocket && run == null) {
            throw new UsageException("--socket=- (nbdkit's -U -) is the private socket of --run=CMD: without --run, give"
                    + " --socket=PATH");
        }
        // qemu-nbd's snapshot is the layer right above the image, below any other filter.
        if (snapshot) filters.add("cow");
        checkExports();
        checkService();
        if (tls != TlsMode.OFF && tlsCertificates == null) {
            throw new UsageException("--tls=" + tls.name().toLowerCase(Locale.ROOT) + " needs --tls-certificates=DIR");
        }
        if (tls == TlsMode.OFF && (tlsCertificates != null || tlsVerifyPeer)) {
            throw new UsageException((tlsVerifyPeer ? "--tls-verify-peer" : "--tls-certificates")
                    + " needs --tls=on or --tls=require");
        }
        if (readOnly && create != null) throw new UsageException("--create cannot be combined with --read-only");
        java.util.Set<String> bitmapNames = new java.util.HashSet<>();
        for (BitmapSpec b : bitmaps) {
            if (!bitmapNames.add(b.name())) throw new UsageException("--bitmap=" + b.name() + " is given twice");
            if (b.file() == null && upstream != null) {
                throw new UsageException("--bitmap=" + b.name() + " of a proxied export needs :file=PATH (there is no"
                        + " image file to put it beside)");
            }
        }
        if ((bitmapClearAll || !bitmapClear.isEmpty()) && bitmaps.isEmpty()) {
            throw new UsageException("--bitmap-clear needs a --bitmap");
        }
        for (String name : bitmapClear) {
            if (!bitmapNames.contains(name)) {
                throw new UsageException("--bitmap-clear=" + name + ": no --bitmap is named " + name + " (given: "
                        + String.join(", ", bitmapNames) + ")");
            }
        }
        if (!bitmaps.isEmpty() && dir != null) {
            throw new UsageException("--bitmap applies to FILEs, not to the files of --dir=" + dir);
        }
        for (BitmapSpec b : bitmaps) {
            if (b.file() != null && files.size() > 1) {
                throw new UsageException("--bitmap=" + b.name() + ":file=" + b.file() + " would be one bitmap file for "
                        + files.size() + " FILEs: leave out file= to keep each beside its FILE");
            }
        }
    }

    /**
     * Gives every FILE its export name and checks them: no name twice, --export-name and --description only with a
     * lone FILE, --default-export one of them. A lone FILE without a name keeps the name it always had: --export-name
     * (beside --dir too), else "" (unless --dir or --default-export make it one export among others: then its file
     * name).
     */
    private void checkExports() throws UsageException {
        if (upstream != null && dir != null) {
            throw new UsageException("--dir=" + dir + " cannot be combined with a proxied " + upstream);
        }
        if (files.size() > 1 && exportNameGiven) {
            throw new UsageException("--export-name names a lone FILE's export; with several FILEs, give NAME=FILE");
        }
        if (files.size() > 1 && !description.isEmpty()) {
            throw new UsageException("--description describes a lone FILE's export; several FILEs are each described"
                    + " by their path");
        }
        boolean lone = files.size() == 1 && dir == null;
        java.util.Map<String, Path> seen = new java.util.LinkedHashMap<>();
        for (int i = 0; i < files.size(); i++) {
            FileOperand f = files.get(i);
            String name = f.name();
            if (name != null && exportNameGiven) {
                throw new UsageException("--export-name=" + exportName + " and " + name + "=" + f.path()
                        + " both name the export: give one");
            }
            // --export-name names the one FILE also beside --dir (it used to be dropped there without a word).
            if (name == null && (exportNameGiven || (lone && defaultExport == null))) name = exportName;
            if (name == null) {
                Path fileName = f.path().getFileName();
                if (fileName == null) throw new UsageException("'" + f.path() + "' has no file name to name its export"
                        + " after: give NAME=" + f.path());
                name = nbdString("export name '" + fileName + "'", fileName.toString());
            }
            Path before = seen.putIfAbsent(name, f.path());
            if (before != null) {
                throw new UsageException("export name '" + name + "' is given twice ('" + before + "' and '" + f.path()
                        + "'): name them apart with NAME=FILE");
            }
            files.set(i, new FileOperand(name, f.path()));
        }
        if (defaultExport != null && dir == null && !seen.containsKey(defaultExport)) {
            throw new UsageException("--default-export=" + defaultExport + ": no export of that name (the exports: "
                    + (seen.isEmpty() ? "none" : String.join(", ", seen.keySet())) + ")");
        }
    }

    /** The service options against each other and against the process: who runs it, what listens. */
    private void checkService() throws UsageException {
        if (tlsAuthz != null && tls == TlsMode.OFF) {
            throw new UsageException("--tls-authz needs --tls=require");
        }
        if (tlsAuthz != null && tls == TlsMode.ON) {
            throw new UsageException("--tls-authz with --tls=on keeps out TLS clients it does not list but lets in any"
                    + " client without TLS: use --tls=require");
        }
        if (!allow.isEmpty() && socket != null) {
            throw new UsageException("--allow lists TCP client addresses and --socket listens on a Unix socket: use"
                    + " --allow-user=USER for Unix-socket clients");
        }
        if (!allowUsers.isEmpty() && (port != null || bind != null)) {
            throw new UsageException("--allow-user lists Unix-socket users and --port/--bind listen on TCP: use"
                    + " --allow=CIDR for TCP clients");
        }
        if (group != null && user == null) throw new UsageException("--group=" + group + " needs --user=USER");
        if (user != null) {
            long uid = effectiveUid();
            if (uid != 0) {
                throw new UsageException("--user=" + user + " needs root, to change user once listening; this process"
                        + " runs as uid " + uid + " (start serve as the user you want instead)");
            }
        }
    }

    /** {@return the process's effective uid}, from /proc/self/status; -1 when it cannot be read */
    static long effectiveUid() {
        try {
            for (String line : java.nio.file.Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("Uid:")) return Long.parseLong(line.substring(4).trim().split("\\s+")[1]);
            }
        } catch (IOException | RuntimeException e) {
            // reported as -1
        }
        return -1;
    }
}

package io.pagewise.cli;

import static io.pagewise.cli.ServeArguments.*;

import io.pagewise.CacheMode;
import io.pagewise.filters.Filters;
import io.pagewise.nbd.server.NbdServer;
import io.pagewise.nbd.NbdUri;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.List;

/** {@code pagewise serve}: serves a file (or a scratch demo image, or another NBD server's export) with {@link NbdServer}. */
public final class ServeCommand {
    private static final String DESCRIPTION = String.join("\n",
            "Serves FILE over NBD; without FILE, serves a sparse 1 GiB scratch image that is removed at exit.",
            "Several FILEs are exports named after their file names (/srv/vm1.img is vm1.img), or as NAME=FILE says.",
            "With an NBD URI (nbd://HOST[:PORT]/EXPORT, nbd+unix:///EXPORT?socket=PATH), proxies that export.");

    /** Every option of serve, once: the usage, the parsing and (checked by a test) docs/SERVER.md come from it. */
    static final OptionTable<ServeOptions> TABLE = new OptionTable<>("usage: pagewise serve [OPTIONS] [FILE... | NBD-URI]",
            DESCRIPTION, List.of(
            CliOption.value("--cache", "MODE", Arguments.cacheModeChoices(CacheMode.WRITEBACK)
                    + "; qemu-nbd's none is direct",
                    (o, name, value) -> {
                        o.cache = Arguments.serveCacheMode(name, value, o.notices);
                        o.cacheGiven = true;
                    }),
            CliOption.value("--hint", "HINT", "normal (default), sequential, random",
                    (o, name, value) -> o.hint = hint(name, value)),
            CliOption.flag("-r, --read-only, --readonly", "refuse writes, trims and zeroes", (o, name, value) -> o.readOnly = true),
            CliOption.value("--filter", "NAME[:KEY=VALUE,...]", "wrap the served device in a filter ("
                    + String.join(", ", Filters.names()) + "); repeatable, the first given is nearest the client",
                    (o, name, value) -> o.filters.add(Arguments.filter(name, value))),
            CliOption.value("-B, --bitmap", "NAME[:file=PATH,granularity=SIZE]", "keep a persistent dirty bitmap of every"
                    + " write, zero and trim, served as qemu:dirty-bitmap:NAME (default file FILE.NAME.bitmap, granularity"
                    + " 64K); repeatable", (o, name, value) -> o.bitmaps.add(bitmap(name, value))),
            CliOption.optionalValue("--bitmap-clear", "NAME", "start a new generation of the --bitmap NAME (of every"
                    + " --bitmap without NAME): all clean, valid again; repeatable",
                    (o, name, value) -> {
                        if (value == null) o.bitmapClearAll = true; else o.bitmapClear.add(value);
                    }),
            CliOption.flag("-A, --allocation-depth", "offer the meta context qemu:allocation-depth, as qemu-nbd -A",
                    (o, name, value) -> o.allocationDepth = true),
            CliOption.value("-k, -U, --socket, --unix", "PATH", "listen on a Unix socket; - (nbdkit's -U -) with --run:"
                    + " a private one, as without --socket", (o, name, value) -> {
                        o.privateSocket = value.equals("-");
                        o.socket = o.privateSocket ? null : Path.of(nonEmpty(name, value));
                    }),
            CliOption.value("-p, --port", "N", "listen on TCP port N (default 10809)",
                    (o, name, value) -> o.port = Arguments.integer(name, value, 0, 65535)),
            CliOption.value("-b, -i, --bind, --ipaddr", "ADDR", "TCP address to listen on (default 127.0.0.1; 0.0.0.0"
                    + " or :: for all)", (o, name, value) -> o.bind = address(name, nonEmpty(name, value))),
            CliOption.value("-x, --export-name, --exportname", "NAME", "export name (default: empty)",
                    (o, name, value) -> { o.exportName = nbdString(name, value); o.exportNameGiven = true; }),
            CliOption.value("-D, --description", "TEXT", "export description shown by clients",
                    (o, name, value) -> o.description = description(name, value)),
            // Several exports, running as a service, metrics, access control: the options an operator of nbdkit or
            // qemu-nbd looks for, kept together in one block.
            CliOption.value("--dir", "DIR", "serve every regular file and block device of DIR, each named after its"
                    + " file; files added later appear", (o, name, value) -> o.dir = Path.of(nonEmpty(name, value))),
            CliOption.value("--default-export", "NAME", "the export a client that gives no name gets",
                    (o, name, value) -> o.defaultExport = nbdString(name, value)),
            CliOption.flag("--force-raw", "serve a FILE that starts with a qcow2, VMDK, VHDX or LUKS signature as raw"
                    + " bytes, with a warning, instead of refusing it", (o, name, value) -> o.forceRaw = true),
            CliOption.value("-P, --pidfile, --pid-file", "FILE", "write the process id to FILE once listening; removed"
                    + " at exit", (o, name, value) -> o.pidFile = pidFile(name, value)),
            CliOption.flag("--exit-with-parent", "stop (as at SIGTERM) when the process that started serve ends",
                    (o, name, value) -> o.exitWithParent = true),
            CliOption.flag("--foreground", "accepted for nbdkit's scripts and ignored: serve always runs in the"
                    + " foreground", (o, name, value) -> { }),
            CliOption.flag("--fork", "not offered: run serve under systemd, or in the background with &",
                    (o, name, value) -> {
                        throw new UsageException("--fork is not offered: serve always runs in the foreground; run it"
                                + " under systemd (docs/systemd) or in the background with & (and --pidfile=FILE to"
                                + " learn when it listens)");
                    }),
            CliOption.value("--log", "DEST", "stderr (default): plain lines; journal: lines on stderr with syslog"
                    + " severity prefixes (<3> error ... <7> debug), which journald reads",
                    (o, name, value) -> o.journal = logDestination(name, value)),
            CliOption.value("--metrics", "ADDR:PORT", "serve Prometheus metrics over HTTP at"
                    + " http://ADDR:PORT/metrics (port 0 picks one)", (o, name, value) -> o.metrics = metrics(name, value)),
            CliOption.value("--jmx", "NAME", "register the server's JMX MXBeans as io.pagewise:type=NbdServer,name=NAME",
                    (o, name, value) -> o.jmx = nonEmpty(name, value)),
            CliOption.value("--allow", "CIDR,...", "let TCP clients in only from these addresses or CIDR blocks;"
                    + " repeatable", (o, name, value) -> o.allow.addAll(allowed(name, value))),
            CliOption.value("--allow-user", "USER,...", "let Unix-socket clients in only when they run as one of these"
                    + " users (names or uids, from SO_PEERCRED); repeatable",
                    (o, name, value) -> o.allowUsers.addAll(allowedUsers(name, value))),
            CliOption.value("--tls-authz", "FILE", "with --tls=require, let clients in only with a certificate whose subject FILE"
                    + " lists, one distinguished name a line", (o, name, value) -> o.tlsAuthz = Path.of(nonEmpty(name, value))),
            CliOption.value("-u, --user", "USER", "when started as root: run as USER once listening and the exports are"
                    + " open", (o, name, value) -> o.user = nonEmpty(name, value)),
            CliOption.value("-g, --group", "GROUP", "with --user: run as GROUP instead of USER's primary group",
                    (o, name, value) -> o.group = nonEmpty(name, value)),
            // End of the operators' block.
            CliOption.value("--run", "CMD", "run CMD with sh -c ($uri, $nbd, $exportname, and $unixsocket or $port set),"
                    + " stop when it exits and exit with its status; SIGINT, SIGTERM and SIGHUP are passed on to it", (o, name, value) -> o.run = nonEmpty(name, value)),
            CliOption.optionalValue("--stats", "FILE", "at exit, print request statistics and page-cache residency"
                    + " (default stderr)", (o, name, value) -> {
                        o.stats = true;
                        if (value != null) o.statsFile = Path.of(nonEmpty(name, value));
                    }),
            CliOption.value("--threads", "N", "threads serving each connection: its requests run at once (default 16)",
                    (o, name, value) -> o.threads = Arguments.integer(name, value, 1, 1024)),
            CliOption.value("--max-connections", "N", "connections in transmission at once (default 64); a client that"
                    + " completes its handshake beyond it is refused",
                    (o, name, value) -> o.maxConnections = Arguments.integer(name, value, 1, 65536)),
            CliOption.value("--max-handshakes", "N", "connections in the handshake at once (default 64); beyond it the"
                    + " oldest pending handshake is dropped to make room",
                    (o, name, value) -> o.maxHandshakes = Arguments.integer(name, value, 1, 65536)),
            CliOption.value("--max-inflight-bytes", "SIZE", "payload bytes buffered at once (default 64M; K, M, G"
                    + " suffixes); one connection may hold a quarter of it",
                    (o, name, value) -> o.maxInflightBytes = Arguments.size(name, value)),
            CliOption.value("--handshake-timeout", "SECONDS", "drop clients that have not finished the handshake by then"
                    + " (default 10; 0 for no limit)",
                    (o, name, value) -> o.handshakeTimeoutSeconds = Arguments.integer(name, value, 0, 86400)),
            CliOption.value("--idle-timeout", "SECONDS", "close connections with no request in flight and nothing"
                    + " received for that long (default 0: no limit)",
                    (o, name, value) -> o.idleTimeoutSeconds = Arguments.integer(name, value, 0, 864000)),
            CliOption.value("--reply-timeout", "SECONDS", "cut connections that leave a reply unread that long: the"
                    + " socket takes none of it (default 60; 0 for no limit)",
                    (o, name, value) -> o.replyTimeoutSeconds = Arguments.integer(name, value, 0, 864000)),
            CliOption.value("--shutdown-grace", "SECONDS", "at exit, time left to connections to send the replies they"
                    + " owe before they are cut (default 5)",
                    (o, name, value) -> o.shutdownGraceSeconds = Arguments.integer(name, value, 0, 3600)),
            CliOption.value("--create", "SIZE", "create FILE (sparse) or extend it to SIZE",
                    (o, name, value) -> o.create = Arguments.size(name, value)),
            CliOption.value("--tls", "MODE", "off (default), on (offer TLS), require (refuse clients until they start TLS)",
                    (o, name, value) -> o.tls = tlsMode(name, value)),
            CliOption.value("--tls-certificates", "DIR", "ca-cert.pem, server-cert.pem and server-key.pem, as nbdkit and"
                    + " qemu use them", (o, name, value) -> o.tlsCertificates = Path.of(nonEmpty(name, value))),
            CliOption.flag("--tls-verify-peer", "clients must present a certificate that chains to DIR/ca-cert.pem",
                    (o, name, value) -> o.tlsVerifyPeer = true),
            CliOption.value("--tls-psk", "FILE", "not supported: the JDK's TLS has no pre-shared keys (use"
                    + " --tls-certificates)", (o, name, value) -> {
                        throw new UsageException("--tls-psk is not supported: the JDK's TLS has no pre-shared keys "
                                + "(see docs/SERVER.md); use --tls-certificates=DIR");
                    }),
            CliOption.flag("-v, --verbose", "log every request", (o, name, value) -> o.verbose = true),
            // qemu-nbd's spellings, with qemu-nbd's meaning where nbdkit's differs (a line says so on a mix-up).
            CliOption.<ServeOptions>flag("-t, --persistent", "keep serving after the last client leaves, as serve always"
                    + " does (nbdkit's -t THREADS is --threads)", (o, name, value) -> { })
                    .under("qemu-nbd's options (nbdkit's -U, -i, -P, -u, -g, --unix, --ipaddr, --exportname, --readonly"
                            + " are above):"),
            CliOption.value("-e, --shared", "N", "--max-connections=N, 0 for no limit (nbdkit's -e NAME is"
                    + " --export-name=NAME)", (o, name, value) -> o.maxConnections = shared(name, value)),
            CliOption.value("-f, --format", "FORMAT", "raw, as --force-raw; other formats are refused (nbdkit's -f is"
                    + " --foreground, how serve always runs)", (o, name, value) -> o.forceRaw = rawFormat(name, value)),
            CliOption.flag("-n, --nocache", "--cache=direct (O_DIRECT); nbdkit's -n (newstyle) is what serve always"
                    + " speaks", (o, name, value) -> { o.cache = CacheMode.DIRECT; o.cacheGiven = true; }),
            CliOption.flag("-s, --snapshot", "writes go to a temporary overlay, dropped at exit: --filter=cow, nearest"
                    + " the FILE", (o, name, value) -> o.snapshot = true),
            CliOption.value("--aio", "MODE", "threads, how serve always does its I/O (--threads=N); native and io_uring"
                    + " are refused", (o, name, value) -> aio(name, value)),
            CliOption.value("--discard", "MODE", "unmap, what serve always does: a trim punches a hole; ignore is"
                    + " refused", (o, name, value) -> discard(name, value)),
            CliOption.value("--tls-creds", "ID", "refused: give --tls-certificates=DIR",
                    (o, name, value) -> {
                        throw new UsageException(name + " names a qemu --object, which pagewise does not have: give"
                                + " --tls=require --tls-certificates=DIR (ca-cert.pem, server-cert.pem, server-key.pem)");
                    }),
            CliOption.value("-c, --connect", "DEV", "refused: pagewise does not attach /dev/nbdN (nbd-client or qemu-nbd"
                    + " -c do)", (o, name, value) -> {
                        throw new UsageException(name + " is not offered: pagewise does not attach the kernel's NBD"
                                + " client; serve FILE and attach it with nbd-client 127.0.0.1 " + value);
                    }),
            CliOption.flag("-L, --list", "refused: list another server's exports with nbdinfo --list URI",
                    (o, name, value) -> {
                        throw new UsageException(name + " is not offered: serve serves; list a server's exports with"
                                + " nbdinfo --list nbd://HOST");
                    })),
            ServeCommand::operand, "").checkingWordsAfterOptions(ServeCommand::wordAfterOption);

    static final String USAGE = TABLE.usage();

    static final long DEMO_SIZE = 1L << 30;

    private ServeCommand() {}

    /** Runs {@code serve} with the arguments after the command name; returns the exit status. */
    public static int run(List<String> args, PrintStream out, PrintStream err) {
        ServeOptions options;
        try {
            options = parse(args);
        } catch (UsageException e) {
            err.println("pagewise serve: " + e.getMessage());
            err.println(TABLE.synopsis() + "   (pagewise serve --help for the options)");
            return 2;
        }
        if (options == null) {
            out.println(USAGE);
            return 0;
        }
        // With --log=journal the last word on a failure carries the error severity too.
        String error = options.journal ? "<3>pagewise serve: " : "pagewise serve: ";
        for (String notice : options.notices) err.println((options.journal ? "<4>" : "") + "pagewise serve: " + notice);
        try {
            return new ServeRun(options, out, err).serve();
        } catch (ServeRun.UsageProblem e) {
            err.println(error + Main.message(e));
            err.println(TABLE.synopsis() + "   (pagewise serve --help for the options)");
            return 2;
        } catch (IOException | RuntimeException e) {
            err.println(error + Main.message(e));
            return 1;
        }
    }

    static ServeOptions parse(List<String> args) throws UsageException {
        ServeOptions o = new ServeOptions();
        if (!TABLE.parse(args, o)) return null;
        o.complete();
        return o;
    }

    /**
     * A FILE that came right after a switch or after --stats without =: nbdkit's -t THREADS, or a value meant for
     * --stats, would otherwise become an export without a word.
     */
    private static void wordAfterOption(ServeOptions o, CliOption<ServeOptions> option, String name, String word)
            throws UsageException {
        boolean exists = exists(word);
        if (option.longNames().contains("--persistent") && word.matches("[0-9]+") && !exists) {
            throw new UsageException(name + " " + word + ": " + name + " is qemu-nbd's --persistent, which takes no"
                    + " value (serve always keeps running); for nbdkit's -t THREADS give --threads=" + word);
        }
        if (option.arity() != CliOption.Arity.OPTIONAL) return;
        String meant = name + "=" + word;
        int exports = o.files.size() + (o.upstream != null ? 1 : 0);
        if (exports > 1) {
            throw new UsageException("'" + word + "' after " + name + " would be served as one of " + exports
                    + " exports: did you mean " + meant + "? (" + name + " takes its value only after =; to serve it,"
                    + " give the FILEs before " + name + ")");
        }
        if (o.upstream == null && !exists && o.create == null) {
            throw new UsageException("did you mean " + meant + "? ('" + word + "' after " + name + " would be the FILE"
                    + " to serve, and there is no such file; " + name + " takes its value only after =)");
        }
        o.notices.add("'" + word + "' after " + name + " is the FILE to serve, not " + name + "'s value (that would be"
                + " " + meant + ")");
    }

    /** Whether a FILE or NAME=FILE operand names something that exists; an NBD-URI counts as existing. */
    private static boolean exists(String word) {
        if (Endpoint.scheme(word) != null) return true;
        int eq = word.indexOf('=');
        String file = eq >= 0 && word.lastIndexOf('/', eq) < 0 ? word.substring(eq + 1) : word;
        try {
            return !file.isEmpty() && java.nio.file.Files.exists(Path.of(file));
        } catch (java.nio.file.InvalidPathException e) {
            return false;
        }
    }

    /**
     * FILE, NAME=FILE or NBD-URI; after --, never an NBD-URI. NAME=FILE when there is a = and no / before it, so that
     * a file whose name has a = is given as ./a=b.img (or NAME=a=b.img).
     */
    private static void operand(ServeOptions o, String arg, boolean afterEnd) throws UsageException {
        String scheme = afterEnd ? null : Endpoint.scheme(arg);
        if (scheme != null && !NbdUri.SCHEMES.contains(scheme)) {
            throw Endpoint.unknownScheme("NBD-URI", arg, scheme, "nbd://, nbds://, nbd+unix:// and nbds+unix://");
        }
        boolean uri = scheme != null;
        if (o.upstream != null || (uri && !o.files.isEmpty())) {
            throw new UsageException("an NBD-URI is served alone, not with other FILEs or NBD-URIs ('"
                    + (o.upstream != null ? o.upstream : o.files.get(0).path()) + "' and '" + arg + "')");
        }
        if (uri) {
            try {
                NbdUri.parse(arg); // a malformed URI is a usage mistake (exit 2), as it is for copy
            } catch (IllegalArgumentException e) {
                throw new UsageException("NBD-URI: " + e.getMessage());
            }
            o.upstream = arg;
            return;
        }
        decoded("FILE '" + arg + "'", arg); // else Path.of names another file than the user did
        int eq = arg.indexOf('=');
        if (eq >= 0 && arg.lastIndexOf('/', eq) < 0) {
            String name = arg.substring(0, eq);
            if (eq == arg.length() - 1) throw new UsageException("'" + arg + "': no FILE after NAME=");
            o.files.add(new ServeOptions.FileOperand(nbdString("export name '" + name + "'", name), Path.of(arg.substring(eq + 1))));
        } else {
            if (arg.isEmpty()) throw new UsageException("an empty FILE ('') was given");
            o.files.add(new ServeOptions.FileOperand(null, Path.of(arg)));
        }
    }
}

package io.pagewise.cli;

import io.pagewise.AccessHint;
import io.pagewise.CacheMode;
import io.pagewise.nbd.server.NbdServer;
import io.pagewise.nbd.NbdUri;
import io.pagewise.nbd.TlsMode;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

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

    static final long DEMO_SIZE = 1L << 30;

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
}

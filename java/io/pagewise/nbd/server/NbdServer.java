package io.pagewise.nbd.server;

import io.pagewise.device.BlockDevice;
import io.pagewise.internal.FileErrors;
import io.pagewise.nbd.TlsMode;
import io.pagewise.nbd.server.ExportEntry;
import io.pagewise.nbd.server.exports.Exports;
import io.pagewise.nbd.server.metrics.PrometheusText;
import io.pagewise.nbd.server.metrics.RequestStats;
import io.pagewise.nbd.server.metrics.ServerMBeans;
import io.pagewise.nbd.server.protocol.ByteBudget;
import io.pagewise.nbd.server.protocol.PayloadBuffers;
import io.pagewise.nbd.server.protocol.ServerContext;
import io.pagewise.nbd.server.service.Connections;
import io.pagewise.nbd.server.service.Listener;
import io.pagewise.nbd.tls.ServerTls;
import io.pagewise.nbd.tls.TlsSettings;
import io.pagewise.nbd.tls.TlsWarmup;
import io.pagewise.nbd.wire.Protocol;
import java.io.Closeable;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import javax.net.ssl.SSLContext;

/**
 * An NBD server: fixed-newstyle handshake, structured replies, {@code base:allocation}, and many connections with
 * many requests in flight each, executed by threads of each connection ({@link Builder#threads}).
 *
 * <pre>{@code
 * try (FileDevice disk = FileDevice.open(path, CacheMode.EVICT, READ, WRITE);
 *      NbdServer server = NbdServer.builder().export("", disk).unixSocket(socket).start()) {
 *     System.out.println(server.uri());   // nbd+unix:///?socket=...
 *     server.awaitStopped();
 * }
 * }</pre>
 *
 * <p>The server does not close the exports it serves; it flushes the writable ones when it stops.
 *
 * <p>It logs through the {@link System.Logger} named {@value #LOGGER_NAME} (or the one {@link Builder#logger}
 * gives), so an application routes it with its {@link System.LoggerFinder}; by default the JDK's goes to
 * {@code java.util.logging}. Levels: {@code ERROR} when the server itself fails (accepting a connection, flushing an
 * export at shutdown, a bug); {@code WARNING} for a client that breaks the protocol, is refused (by the connection
 * limit or the allow-lists), is dropped for a handshake timeout or to make room for a newer handshake, or is cut at
 * shutdown, and for a request that failed or was refused (the client got an error reply); refusals, drops and
 * requests at most one line a second each, with the count held back; {@code INFO} when a connection ends
 * without a clean disconnect or is closed by the idle timeout; {@code DEBUG} for the export each connection chose
 * and for every request, with its result and latency (formatted only when DEBUG is enabled).
 *
 * <p>Connections are limited in two groups: at most {@link Builder#maxHandshakes} in the handshake, where the oldest
 * is dropped to make room for a new one, so that clients that connect and send nothing cannot keep out one that
 * completes its handshake; and at most {@link Builder#maxConnections} in transmission, where a client that
 * completes its handshake while they are all taken is refused ({@code NBD_REP_ERR_POLICY} to {@code NBD_OPT_GO}).
 * Each connection has a thread of its own in the handshake, and {@link Builder#threads} in transmission.
 *
 * <p>Exports are added by name ({@link Builder#export}), or come from an {@link ExportSource} asked at each client's
 * request ({@link DirectoryExports}: the files of a directory); {@link Builder#defaultExport} names the one a client
 * gets for "". {@link #metrics()} renders the counters as Prometheus text, and {@link Builder#jmx} registers them as
 * MXBeans. {@link Builder#allow}, {@link Builder#allowUsers} and {@link Builder#tlsAuthz} keep clients out by address,
 * user or certificate; {@link ServiceProcess} has what a service needs of its process (socket activation, a pid file,
 * exit with the parent, dropping root).
 *
 * <p>With {@link Builder#tls} the server speaks TLS after the client's STARTTLS, on TCP and Unix sockets alike;
 * {@link io.pagewise.nbd.TlsCertificates} makes the context from an nbdkit-style certificates directory.
 */
public final class NbdServer implements Closeable {
    /** The port a server listens on when no address is given: 10809, NBD's registered port, on the loopback address. */
    public static final int DEFAULT_PORT = 10809;
    /** The default for {@link Builder#replyTimeout}. */
    public static final Duration DEFAULT_REPLY_TIMEOUT = Duration.ofSeconds(60);
    /** The default for {@link Builder#shutdownGrace}. */
    public static final Duration DEFAULT_SHUTDOWN_GRACE = Duration.ofSeconds(5);
    /** The default for {@link Builder#maxHandshakes}. */
    public static final int DEFAULT_MAX_HANDSHAKES = 64;
    /** The default for {@link Builder#threads}. */
    public static final int DEFAULT_THREADS = 16;
    /** The name of the {@link System.Logger} a server logs to unless {@link Builder#logger} names another. */
    public static final String LOGGER_NAME = "io.pagewise.nbd.server";

    private final Exports exports;
    private final Listener listener;
    private final ServerTls tls;
    private final Connections connections;
    private final ServerStats stats;
    private final System.Logger log;
    private final CountDownLatch stopped = new CountDownLatch(1);
    /** The JMX beans, or null when {@link Builder#jmx} was not asked for. */
    private final ServerMBeans mbeans;
    private boolean stopping;

    private NbdServer(Builder b) throws IOException {
        this.exports = new Exports(b.exports, b.sources, b.defaultExport, b.allocationDepth);
        this.log = b.logger != null ? b.logger : System.getLogger(LOGGER_NAME);
        this.stats = new ServerStats();
        this.tls = new ServerTls(b.tlsContext == null ? TlsSettings.OFF
                : new TlsSettings(b.tlsContext, b.tlsMode, b.tlsVerifyPeer), b.tlsWarmupBytes, log);
        this.listener = b.inherited != null ? Listener.adopt(b.inherited) : Listener.bind(b.address != null ? b.address
                : new InetSocketAddress(InetAddress.getLoopbackAddress(), DEFAULT_PORT));
        long inflight = DirectMemory.fitBudget(b.maxInflightBytes, DirectMemory.limit(), log);
        ByteBudget budget = new ByteBudget(inflight);
        long perConnection = b.maxInflightBytesPerConnection > 0 ? Math.min(b.maxInflightBytesPerConnection, inflight)
                : Math.max(PayloadBuffers.SMALL, inflight / 4);
        RequestStats counters = stats.counters();
        ServerContext context = new ServerContext(b.threads, budget, perConnection,
                new PayloadBuffers(inflight, counters), counters, log, Protocol.MAX_PAYLOAD,
                PayloadBuffers.longestWithin(perConnection, Protocol.MAX_PAYLOAD));
        stats.watch(context);
        this.mbeans = b.jmxName == null ? null : new ServerMBeans(b.jmxName, this, log);
        this.connections = new Connections(new Connections.Settings(exports, context, tls, stats.connectionEvents(),
                b.maxConnections, b.maxHandshakes, b.handshakeTimeout, b.idleTimeout, b.replyTimeout, b.shutdownGrace,
                b.allowLists.access()), listener);
    }

    /** {@return new settings for a server, to add exports to and then {@link Builder#start()}} */
    public static Builder builder() {
        return new Builder();
    }

    /** {@return the address the server listens on}: the real port when port 0 was asked for */
    public SocketAddress address() {
        return listener.address();
    }

    /** {@return the URI of the export named "", else of the {@linkplain Builder#defaultExport default export}, else of the first one added} */
    public String uri() {
        return uri(exports.firstName());
    }

    /**
     * {@return a libnbd-style URI for an export: {@code nbd+unix:///NAME?socket=PATH} or {@code nbd://HOST:PORT/NAME}},
     * with the TLS schemes {@code nbds+unix} and {@code nbds} when the server requires TLS
     *
     * @param exportName the export's name, which the URI percent-encodes
     */
    public String uri(String exportName) {
        return ServerUri.of(listener, tls.mode() == TlsMode.REQUIRE, exportName);
    }

    /** {@return the server's live counters} */
    public ServerStats stats() {
        return stats;
    }

    /**
     * {@return the exports served so far}: every one added by name, and those of {@link Builder#exports sources}
     * that a client has asked for
     */
    public List<ExportEntry> exports() {
        return List.copyOf(exports.served());
    }

    /**
     * {@return the server's metrics now, in the Prometheus text exposition format (version 0.0.4)}: connections,
     * handshakes and refusals; requests, bytes, errors and latency histograms per export and command; bytes in
     * flight; each file export's page-cache state (Linux 6.5+). Serve it over HTTP with
     * {@code Content-Type: text/plain; version=0.0.4}; docs/SERVER.md lists the metrics.
     */
    public String metrics() {
        return PrometheusText.of(this);
    }

    /** {@return the connections currently open (in handshake or transmission)} */
    public int connectionCount() {
        return connections.count();
    }

    /** {@return the connections currently in transmission, the ones {@link Builder#maxConnections} limits} */
    public int transmittingCount() {
        return connections.transmitting();
    }

    /** {@return true once {@link #close()} has finished} */
    public boolean isStopped() {
        return stopped.getCount() == 0;
    }

    /**
     * Blocks until {@link #close()} has finished (from any thread).
     *
     * @throws InterruptedException when the waiting thread is interrupted
     */
    public void awaitStopped() throws InterruptedException {
        stopped.await();
    }

    /**
     * Stops: no new connections, in-flight requests finish and are answered, connections close, writable exports
     * are flushed, the socket file is removed. A connection that has not finished within the
     * {@linkplain Builder#shutdownGrace shutdown grace} (a client that does not read its replies) is cut. Idempotent;
     * later callers wait for the first to finish.
     *
     * @throws IOException when flushing an export fails (after everything else is done)
     */
    @Override
    public void close() throws IOException {
        synchronized (this) {
            if (stopping) {
                try {
                    stopped.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                return;
            }
            stopping = true;
        }
        try {
            connections.stop();
            tls.stop();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            IOException failure = ShutdownFlush.flushAll(exports.handedOut(), stats, log);
            removeSocketFile();
            if (mbeans != null) mbeans.unregisterAll();
            stopped.countDown();
            if (failure != null) throw failure;
        }
    }

    /**
     * Removes the Unix socket file this server made; one it may no longer remove (a server that changed its user
     * since it made the file as root) is left with a warning: it is no failure of the stop, whose data is flushed.
     */
    private void removeSocketFile() {
        try {
            listener.removeOwnSocket(log);
        } catch (IOException e) {
            log.log(Level.WARNING, "cannot remove the socket file " + listener.socketFile() + ": " + FileErrors.reason(e));
        }
    }

    private NbdServer begin() throws IOException {
        if (mbeans != null) {
            try {
                mbeans.registerServer();
            } catch (IOException e) {
                listener.close();
                removeSocketFile();
                throw e;
            }
            exports.onFirstServed(mbeans::exportServed);
        }
        connections.start();
        tls.start();
        return this;
    }

    /** Settings for a server; {@link #start()} binds and starts accepting. */
    public static final class Builder {
        private final Map<String, ExportEntry> exports = new LinkedHashMap<>();
        private final List<ExportSource> sources = new ArrayList<>();
        private String defaultExport;
        private boolean allocationDepth;
        private SocketAddress address;
        private ServerSocketChannel inherited;
        private String jmxName;
        private int threads = DEFAULT_THREADS;
        private int maxConnections = 64;
        private int maxHandshakes = DEFAULT_MAX_HANDSHAKES;
        private Duration idleTimeout = Duration.ZERO;
        private Duration replyTimeout = DEFAULT_REPLY_TIMEOUT;
        private Duration shutdownGrace = DEFAULT_SHUTDOWN_GRACE;
        private long maxInflightBytes = 64L << 20;
        /** Four payload buffers: one connection's quarter of the budget holds at least one. */
        static final long MIN_INFLIGHT_BYTES = 4L * PayloadBuffers.SMALL;
        private long maxInflightBytesPerConnection;
        private Duration handshakeTimeout = Duration.ofSeconds(10);
        private System.Logger logger;
        private SSLContext tlsContext;
        private TlsMode tlsMode = TlsMode.OFF;
        private boolean tlsVerifyPeer;
        private long tlsWarmupBytes = TlsWarmup.DEFAULT_BYTES;
        private final AllowLists allowLists = new AllowLists();

        private Builder() {}

        /**
         * Adds an export under a name ("" is the default export).
         *
         * @param name   the export's name, at most 4096 bytes of UTF-8
         * @param export the device that serves it
         * @return this builder
         * @throws IllegalArgumentException when the name is too long
         */
        public Builder export(String name, BlockDevice export) {
            return export(name, "", export);
        }

        /**
         * Adds an export under a name, with a description clients can list.
         *
         * @param name        the export's name, at most 4096 bytes of UTF-8
         * @param description a line for humans, or null for none
         * @param export      the device that serves it
         * @return this builder
         * @throws IllegalArgumentException when the name is too long
         */
        public Builder export(String name, String description, BlockDevice export) {
            return export(new ExportEntry(name, description, export));
        }

        /**
         * Adds an export, possibly with the file behind its device, whose page-cache state then shows in
         * {@link NbdServer#metrics()} (resident, dirty, under writeback, evicted pages). An export of the same name
         * added before is replaced.
         *
         * @param export the export
         * @return this builder
         */
        public Builder export(ExportEntry export) {
            exports.put(export.name(), export);
            return this;
        }

        /**
         * Adds exports that may change while the server runs, such as the files of a directory
         * ({@link DirectoryExports}). A name added with {@link #export} wins over the same name from a source, and an
         * earlier source over a later one.
         *
         * @param source where exports are looked up at each client's request
         * @return this builder
         */
        public Builder exports(ExportSource source) {
            sources.add(java.util.Objects.requireNonNull(source, "source"));
            return this;
        }

        /**
         * Names the export a client gets when it asks for the empty name "" (as clients do that are given no name)
         * and no export is named "". The client is told the export's real name when it asks ({@code NBD_INFO_NAME}).
         *
         * @param name an export's name, which must exist when a client asks for it
         * @return this builder
         */
        public Builder defaultExport(String name) {
            this.defaultExport = java.util.Objects.requireNonNull(name, "name");
            return this;
        }

        /**
         * Offers the meta context {@code qemu:allocation-depth} on every export, as {@code qemu-nbd -A} does: for each
         * range, 1 when the export's outermost layer holds it, one more for each {@link
         * io.pagewise.device.LayeredDevice} (such as a copy-on-write overlay) it reads through; a device with no
         * layers holds everything, holes included, at depth 1, as qemu counts a raw file. Off by default.
         *
         * @param offer true to offer it
         * @return this builder
         */
        public Builder allocationDepth(boolean offer) {
            this.allocationDepth = offer;
            return this;
        }

        /**
         * Listens on a Unix domain socket at path (a stale socket file there is replaced).
         *
         * @param path where to create the socket
         * @return this builder
         */
        public Builder unixSocket(Path path) {
            this.address = UnixDomainSocketAddress.of(path);
            return this;
        }

        /**
         * Listens on TCP; port 0 picks a free port (see {@link NbdServer#address()}).
         *
         * @param host the address to listen on
         * @param port the port, or 0 for a free one
         * @return this builder
         */
        public Builder tcp(InetAddress host, int port) {
            this.address = new InetSocketAddress(host, port);
            return this;
        }

        /**
         * Listens on an address: an {@link InetSocketAddress} (TCP) or a {@link UnixDomainSocketAddress}.
         *
         * @param address where to listen
         * @return this builder
         */
        public Builder listen(SocketAddress address) {
            this.address = address;
            return this;
        }

        /**
         * Listens on a socket that is bound and listening already, such as the one systemd passes by socket
         * activation ({@link ServiceProcess#systemdListener()}), TCP or Unix; it replaces any address given. The
         * server closes the socket when it stops, and leaves a Unix socket's file to whoever made it.
         *
         * @param listening a bound, listening server socket
         * @return this builder
         */
        public Builder listen(ServerSocketChannel listening) {
            this.inherited = java.util.Objects.requireNonNull(listening, "listening");
            return this;
        }

        /**
         * Threads serving each connection: how many of its requests run at once (default {@value NbdServer#DEFAULT_THREADS},
         * like nbdkit's). Each thread reads a request, executes it and sends its reply.
         *
         * @param threads threads per connection, at least 1
         * @return this builder
         */
        public Builder threads(int threads) {
            if (threads < 1) throw new IllegalArgumentException("threads must be at least 1");
            this.threads = threads;
            return this;
        }

        /**
         * Connections in transmission at once (default 64). A client that completes its handshake while they are all
         * taken is refused: {@code NBD_OPT_GO} gets {@code NBD_REP_ERR_POLICY} with a message saying so (the client may
         * try again or abort), {@code NBD_OPT_EXPORT_NAME}, which has no error reply, a closed connection. Connections
         * still in the handshake are limited by {@link #maxHandshakes} instead.
         *
         * @param maxConnections at least 1
         * @return this builder
         */
        public Builder maxConnections(int maxConnections) {
            if (maxConnections < 1) throw new IllegalArgumentException("max connections must be at least 1");
            this.maxConnections = maxConnections;
            return this;
        }

        /**
         * Connections in the handshake at once (default {@value NbdServer#DEFAULT_MAX_HANDSHAKES}), each with a thread of
         * its own. A new connection beyond it is not refused: the oldest pending handshake is dropped to make room
         * (logged at most once a second), so that clients that connect and stay silent cannot keep out one that
         * completes its handshake at once.
         *
         * @param maxHandshakes at least 1
         * @return this builder
         */
        public Builder maxHandshakes(int maxHandshakes) {
            if (maxHandshakes < 1) throw new IllegalArgumentException("max handshakes must be at least 1");
            this.maxHandshakes = maxHandshakes;
            return this;
        }

        /**
         * Cap on payload bytes buffered by requests in flight, over all connections (back-pressure beyond it);
         * default 64 MiB. A READ or WRITE longer than a connection's share of it is served in pieces that fit the
         * share.
         *
         * @param bytes at least 256 KiB: a quarter of it must hold one payload buffer (64 KiB), or a single connection
         *              could hold the whole budget
         * @return this builder
         */
        public Builder maxInflightBytes(long bytes) {
            if (bytes < MIN_INFLIGHT_BYTES) {
                throw new IllegalArgumentException("max in-flight bytes must be at least 256K (" + bytes + " given): a"
                        + " quarter of it, what one connection may hold, must fit a 64K payload buffer");
            }
            this.maxInflightBytes = bytes;
            return this;
        }

        /**
         * Cap on payload bytes in flight for one connection (default: a quarter of {@link #maxInflightBytes}), so that
         * one connection, even one that stops reading its replies, cannot hold the whole server-wide budget.
         *
         * @param bytes at least 64 KiB
         * @return this builder
         */
        public Builder maxInflightBytesPerConnection(long bytes) {
            if (bytes < PayloadBuffers.SMALL) {
                throw new IllegalArgumentException("max in-flight bytes per connection must be at least 64K");
            }
            this.maxInflightBytesPerConnection = bytes;
            return this;
        }

        /**
         * Time a client has to finish the handshake (from connecting to choosing an export) before it is dropped
         * and its connection slot freed; default 10 s, zero for no limit.
         *
         * @param timeout the time allowed, not negative
         * @return this builder
         */
        public Builder handshakeTimeout(Duration timeout) {
            if (timeout.isNegative()) throw new IllegalArgumentException("handshake timeout must not be negative");
            this.handshakeTimeout = timeout;
            return this;
        }

        /**
         * Closes a connection in transmission that has had no request in flight and sent no byte for this long
         * (logged at INFO); default zero, no limit, since NBD clients may idle between requests. Requests in flight
         * are never cut: a slow one, or one whose reply the client is slow to read, keeps the connection active.
         *
         * @param timeout the idle time allowed, not negative; zero for no limit
         * @return this builder
         */
        public Builder idleTimeout(Duration timeout) {
            if (timeout.isNegative()) throw new IllegalArgumentException("idle timeout must not be negative");
            this.idleTimeout = timeout;
            return this;
        }

        /**
         * Cuts a connection whose reply the socket has taken no byte of for this long (logged at WARNING, counted in
         * the stats): a client that stopped reading its replies. Its unsent replies hold in-flight bytes, and four
         * such connections would hold the whole budget, stalling every other client's READs and WRITEs. Default
         * {@link #DEFAULT_REPLY_TIMEOUT} (60 s). Replies go out at most 1 MiB per write, and each write that the
         * socket takes counts as progress: a client reading at least 1 MiB per timeout is never cut.
         *
         * @param timeout the time allowed without progress, not negative; zero for no limit
         * @return this builder
         */
        public Builder replyTimeout(Duration timeout) {
            if (timeout.isNegative()) throw new IllegalArgumentException("reply timeout must not be negative");
            this.replyTimeout = timeout;
            return this;
        }

        /**
         * How long {@link NbdServer#close()} lets connections finish the requests they have read and send their
         * replies before it cuts them (default 5 s); zero cuts them at once.
         *
         * @param grace the time allowed, not negative
         * @return this builder
         */
        public Builder shutdownGrace(Duration grace) {
            if (grace.isNegative()) throw new IllegalArgumentException("shutdown grace must not be negative");
            this.shutdownGrace = grace;
            return this;
        }

        /**
         * Logs to this logger instead of the one named {@value NbdServer#LOGGER_NAME}. Applications normally leave
         * this alone and configure that name in their logging; this is for one server that logs somewhere of its
         * own. The levels are those listed on {@link NbdServer}; per-request lines are made only when
         * {@code logger.isLoggable(DEBUG)}.
         *
         * @param logger where the server logs; called from the server's threads
         * @return this builder
         */
        public Builder logger(System.Logger logger) {
            this.logger = java.util.Objects.requireNonNull(logger, "logger");
            return this;
        }

        /**
         * Serves TLS (NBD's STARTTLS) with sessions from context: {@link TlsMode#ON} offers it,
         * {@link TlsMode#REQUIRE} refuses everything else before it. {@link io.pagewise.nbd.TlsCertificates#serverContext} makes a
         * context from a certificates directory.
         *
         * @param context where the server's certificate and key (and, for {@link #tlsVerifyPeer}, the trusted CAs)
         *                come from; may be null only with {@link TlsMode#OFF}
         * @param mode    whether TLS is off, offered or required
         * @return this builder
         * @throws IllegalArgumentException when mode is ON or REQUIRE and context is null
         */
        public Builder tls(SSLContext context, TlsMode mode) {
            java.util.Objects.requireNonNull(mode, "mode");
            if (mode != TlsMode.OFF && context == null) throw new IllegalArgumentException("TLS mode " + mode + " needs an SSLContext");
            this.tlsContext = mode == TlsMode.OFF ? null : context;
            this.tlsMode = mode;
            return this;
        }

        /**
         * Requires TLS clients to present a certificate that the context's trust managers accept (with
         * {@link io.pagewise.nbd.TlsCertificates#serverContext}, one that chains to {@code ca-cert.pem}); default false.
         *
         * @param verifyPeer true to require and verify client certificates
         * @return this builder
         */
        public Builder tlsVerifyPeer(boolean verifyPeer) {
            this.tlsVerifyPeer = verifyPeer;
            return this;
        }

        /**
         * Lets TCP clients in only from these addresses, like nbdkit's ip filter: each an IPv4 or IPv6 address or CIDR
         * block ({@code 127.0.0.1}, {@code 10.0.0.0/8}, {@code fd00::/8}); an IPv4 block matches IPv4-mapped IPv6
         * peers too. Others are disconnected before the greeting, logged at WARNING (at most one line a second) and
         * counted in {@link ServerStats#accessRefusals()}. Called again, it adds to the list; none means any address.
         *
         * @param cidrs addresses or CIDR blocks, literal (no host names)
         * @return this builder
         * @throws IllegalArgumentException naming a value that is not an address or CIDR block
         */
        public Builder allow(String... cidrs) {
            allowLists.addAddresses(cidrs);
            return this;
        }

        /**
         * Lets Unix-socket clients in only when the kernel says (SO_PEERCRED) that they run as one of these users;
         * others are refused as {@link #allow} refuses addresses. Called again, it adds to the list; none means any user.
         *
         * @param users user names or numeric uids
         * @return this builder
         * @throws IllegalArgumentException naming a user that does not exist
         */
        public Builder allowUsers(String... users) {
            allowLists.addUsers(users);
            return this;
        }

        /**
         * Lets TLS clients in only when their certificate's subject is one of these, like qemu-nbd's
         * {@code --tls-authz}; turns {@link #tlsVerifyPeer} on, since only a verified certificate says who a client
         * is. A client whose subject is not listed is disconnected right after the TLS handshake, logged and counted
         * as {@link #allow} says. Subjects compare as X.500 names: {@code CN=backup,O=Example} matches
         * {@code cn=Backup, o=example}. Called again, it adds to the list.
         *
         * @param subjects distinguished names, RFC 2253 ({@code CN=client,O=Example})
         * @return this builder
         * @throws IllegalArgumentException naming a subject that is not a distinguished name
         */
        public Builder tlsAuthz(java.util.Collection<String> subjects) {
            allowLists.addSubjects(subjects);
            this.tlsVerifyPeer = true;
            return this;
        }

        /**
         * Reads the allowed TLS client subjects for {@link #tlsAuthz} from a file: one distinguished name a line,
         * blank lines and lines starting with {@code #} ignored.
         *
         * @param file the allow-list
         * @return this builder
         * @throws IOException when the file cannot be read
         * @throws IllegalArgumentException naming the file and line of a subject that is not a distinguished name,
         *                                  or the file when it allows no one
         */
        public Builder tlsAuthzFile(Path file) throws IOException {
            List<String> subjects = new ArrayList<>();
            List<String> lines = java.nio.file.Files.readAllLines(file);
            for (int i = 0; i < lines.size(); i++) {
                String line = lines.get(i).trim();
                if (line.isEmpty() || line.startsWith("#")) continue;
                try {
                    tlsAuthz(List.of(line));
                } catch (IllegalArgumentException e) {
                    throw new IllegalArgumentException(file + " line " + (i + 1) + ": " + e.getMessage(), e);
                }
                subjects.add(line);
            }
            if (subjects.isEmpty()) throw new IllegalArgumentException(file + " lists no TLS client subject: it would let no one in");
            return this;
        }

        /**
         * Registers the server's state as JMX MXBeans on the platform MBean server when it starts, and removes them
         * when it stops: {@code io.pagewise:type=NbdServer,name=NAME} ({@link NbdServerMXBean}) and, for each export
         * once it is served, {@code io.pagewise:type=NbdServer,name=NAME,export=EXPORT} ({@link ExportMXBean}). The
         * names are quoted as {@link javax.management.ObjectName#quote} does.
         *
         * @param name what tells this server apart from others in the same JVM
         * @return this builder
         */
        public Builder jmx(String name) {
            this.jmxName = java.util.Objects.requireNonNull(name, "name");
            return this;
        }

        /** How much the TLS warm-up sends; for tests that need one still running when a client comes or at close. */
        Builder tlsWarmupBytes(long bytes) {
            this.tlsWarmupBytes = bytes;
            return this;
        }

        /**
         * Binds the address and starts accepting connections.
         *
         * @return the running server
         * @throws IOException when the address cannot be bound
         * @throws IllegalStateException when no export was added
         */
        public NbdServer start() throws IOException {
            if (exports.isEmpty() && sources.isEmpty()) throw new IllegalStateException("no export to serve");
            if (defaultExport != null && sources.isEmpty() && !exports.containsKey(defaultExport)) {
                throw new IllegalStateException("the default export '" + defaultExport + "' is not one of the exports");
            }
            return new NbdServer(this).begin();
        }
    }
}

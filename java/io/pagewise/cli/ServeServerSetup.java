package io.pagewise.cli;

import io.pagewise.nbd.TlsCertificates;
import io.pagewise.nbd.TlsMode;
import io.pagewise.nbd.server.NbdServer;
import io.pagewise.nbd.server.ServiceProcess;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * The server of a serve run, set up from the options: its settings (limits, timeouts, TLS, access lists), where it
 * listens (or the socket systemd passed), and its start.
 */
final class ServeServerSetup {
    private final ServeOptions options;
    private final System.Logger logger;
    /** Directories the run removes at exit: the private socket's of --run goes there. */
    private final List<Path> temporary;

    ServeServerSetup(ServeOptions options, System.Logger logger, List<Path> temporary) {
        this.options = options;
        this.logger = logger;
        this.temporary = temporary;
    }

    /**
     * The server's settings but its exports and where it listens, certificates included: read first, so that mistakes
     * come early.
     */
    NbdServer.Builder configure() throws IOException {
        javax.net.ssl.SSLContext tlsContext = options.tls == TlsMode.OFF ? null
                : TlsCertificates.serverContext(options.tlsCertificates, verifyPeer());
        NbdServer.Builder builder = NbdServer.builder().logger(logger);
        if (options.threads != null) builder.threads(options.threads);
        if (options.maxConnections != null) builder.maxConnections(options.maxConnections);
        if (options.maxInflightBytes != null) builder.maxInflightBytes(options.maxInflightBytes);
        if (options.handshakeTimeoutSeconds != null) {
            builder.handshakeTimeout(Duration.ofSeconds(options.handshakeTimeoutSeconds));
        }
        if (options.maxHandshakes != null) builder.maxHandshakes(options.maxHandshakes);
        if (options.idleTimeoutSeconds != null) builder.idleTimeout(Duration.ofSeconds(options.idleTimeoutSeconds));
        if (options.replyTimeoutSeconds != null) builder.replyTimeout(Duration.ofSeconds(options.replyTimeoutSeconds));
        if (options.shutdownGraceSeconds != null) builder.shutdownGrace(Duration.ofSeconds(options.shutdownGraceSeconds));
        if (options.tls != TlsMode.OFF) {
            builder.tls(tlsContext, options.tls).tlsVerifyPeer(verifyPeer());
        }
        if (options.tlsAuthz != null) {
            try {
                builder.tlsAuthzFile(options.tlsAuthz);
            } catch (IllegalArgumentException | IOException e) {
                throw new IOException("--tls-authz=" + options.tlsAuthz + ": " + Main.message(e), e);
            }
        }
        if (!options.allow.isEmpty()) builder.allow(options.allow.toArray(String[]::new));
        if (!options.allowUsers.isEmpty()) builder.allowUsers(options.allowUsers.toArray(String[]::new));
        if (options.jmx != null) builder.jmx(options.jmx);
        return builder;
    }

    /**
     * {@return the socket systemd passed (socket activation), or null}; --socket, --port, --bind beside it, or --allow
     * with a Unix socket, are usage mistakes
     */
    ServerSocketChannel activatedSocket() throws IOException {
        ServerSocketChannel activated = ServiceProcess.systemdListener();
        if (activated != null && (options.socket != null || options.port != null || options.bind != null)) {
            throw new ServeRun.UsageProblem("socket activation (LISTEN_PID, LISTEN_FDS) passed the socket to listen on:"
                    + " --socket, --port and --bind cannot be given with it");
        }
        if (activated != null && !options.allow.isEmpty()
                && activated.getLocalAddress() instanceof java.net.UnixDomainSocketAddress) {
            // As with --socket: an address list would let every local client in, or none.
            throw new ServeRun.UsageProblem("--allow lists TCP client addresses and socket activation passed a Unix"
                    + " socket: use --allow-user to choose local users");
        }
        return activated;
    }

    /** Listens where the options say (or on the socket systemd passed) and starts. */
    NbdServer start(NbdServer.Builder builder, ServerSocketChannel activated) throws IOException {
        if (activated != null) {
            builder.listen(activated);
        } else if (options.socket != null) {
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
        } catch (java.net.BindException e) {
            // EADDRNOTAVAIL: the address is not this machine's, which no other port mends.
            boolean address = options.bind != null && String.valueOf(e.getMessage()).contains("Cannot assign requested address");
            throw new IOException(Main.message(e) + (address ? " (--bind=" + options.bind + " is not an address of this machine)"
                    : options.socket == null ? " (choose another with --port=N, or use --socket=PATH)" : ""), e);
        } catch (IOException e) {
            throw new IOException(Main.message(e) + (options.socket == null
                    ? " (choose another with --port=N, or use --socket=PATH)" : ""), e);
        }
    }

    /** --tls-verify-peer, or --tls-authz: only a verified certificate says who a client is. */
    private boolean verifyPeer() {
        return options.tlsVerifyPeer || options.tlsAuthz != null;
    }
}

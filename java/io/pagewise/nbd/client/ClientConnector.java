package io.pagewise.nbd.client;

import io.pagewise.nbd.NbdUri;
import io.pagewise.nbd.TlsCertificates;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.StandardProtocolFamily;
import java.net.UnknownHostException;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.List;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLParameters;

/**
 * How an {@link NbdClient} comes to be: the TLS context a URI asks for, the sockets, a handshake on each, and the
 * further connections multi-conn allows, which must describe the export as the first did. A failure closes every
 * connection opened so far.
 */
final class ClientConnector {
    private ClientConnector() {}

    /** The TLS context an {@code nbds} URI asks for (its certificates directory, else the JDK's), or null for none. */
    static SSLContext tlsContext(NbdUri uri) throws IOException {
        SSLContext tls = null;
        if (uri.tls()) {
            if (!uri.tlsVerifyPeer()) {
                tls = TlsCertificates.clientContextTrustingAnyServer(uri.tlsCertificates());
            } else if (uri.tlsCertificates() != null) {
                tls = TlsCertificates.clientContext(uri.tlsCertificates());
            } else {
                try {
                    tls = SSLContext.getDefault();
                } catch (java.security.NoSuchAlgorithmException e) {
                    throw new IOException("no default TLS context in this JDK: " + e.getMessage(), e);
                }
            }
        }
        return tls;
    }

    /** Connects as {@link NbdClient#connect(NbdUri, int, SSLContext, List)} says. */
    static NbdClient connect(NbdUri uri, int connections, SSLContext tls, List<String> metaContexts)
            throws IOException {
        if (connections < 1) throw new IllegalArgumentException("connections must be at least 1: " + connections);
        List<ClientConnection> open = new ArrayList<>();
        try {
            ExportInfo info = null;
            int wanted = 1;
            while (open.size() < wanted) {
                SocketChannel channel = open(uri);
                try {
                    ClientHandshake handshake = new ClientHandshake(channel, tls == null ? null : engine(tls, uri),
                            uri.text(), uri.exportName(), metaContexts);
                    ExportInfo described = handshake.negotiate();
                    for (String context : metaContexts) {
                        if (!handshake.metaContexts().containsKey(context)) {
                            throw new IOException("NBD server " + uri + " does not offer the meta context " + context
                                    + (described.structuredReplies() ? "" : " (it has no structured replies)"));
                        }
                    }
                    if (info == null) {
                        info = described;
                        wanted = info.canMultiConn() ? connections : 1;
                    } else if (described.size() != info.size() || described.transmissionFlags() != info.transmissionFlags()) {
                        throw new IOException("NBD server " + uri + " described the export differently on connection "
                                + (open.size() + 1));
                    }
                    ClientConnection connection = new ClientConnection(channel, handshake.tls(), info, uri.text(),
                            open.size());
                    connection.metaContexts(handshake.metaContexts());
                    open.add(connection);
                } catch (IOException | RuntimeException e) {
                    channel.close();
                    throw e;
                }
            }
            return new NbdClient(uri, info, List.copyOf(open), List.copyOf(metaContexts));
        } catch (IOException | RuntimeException e) {
            for (ClientConnection c : open) {
                try {
                    c.close();
                } catch (IOException suppressed) {
                    e.addSuppressed(suppressed);
                }
            }
            throw e;
        }
    }

    /**
     * A client engine that checks the server's name: the URI's tls-hostname, else its host on TCP (a Unix socket has
     * no host name to check); none when the URI turned verifying off.
     */
    private static SSLEngine engine(SSLContext context, NbdUri uri) {
        InetSocketAddress inet = uri.address() instanceof InetSocketAddress ? (InetSocketAddress) uri.address() : null;
        String name = uri.tlsHostname() != null ? uri.tlsHostname() : inet != null ? inet.getHostString() : null;
        SSLEngine engine = name == null ? context.createSSLEngine() : context.createSSLEngine(name, inet != null ? inet.getPort() : -1);
        if (name != null && uri.tlsVerifyPeer()) {
            SSLParameters parameters = engine.getSSLParameters();
            parameters.setEndpointIdentificationAlgorithm("HTTPS");
            engine.setSSLParameters(parameters);
        }
        engine.setUseClientMode(true);
        return engine;
    }

    private static SocketChannel open(NbdUri uri) throws IOException {
        SocketAddress address = uri.address();
        if (address instanceof InetSocketAddress && ((InetSocketAddress) address).isUnresolved()) {
            InetSocketAddress named = (InetSocketAddress) address;
            address = new InetSocketAddress(named.getHostString(), named.getPort());
            if (((InetSocketAddress) address).isUnresolved()) {
                throw new UnknownHostException("cannot connect to NBD server " + uri + ": unknown host " + named.getHostString());
            }
        }
        boolean unix = address instanceof UnixDomainSocketAddress;
        SocketChannel channel = unix ? SocketChannel.open(StandardProtocolFamily.UNIX) : SocketChannel.open();
        try {
            channel.connect(address);
            if (!unix) channel.socket().setTcpNoDelay(true);
            return channel;
        } catch (IOException e) {
            channel.close();
            throw new IOException("cannot connect to NBD server " + uri + ": " + e.getMessage(), e);
        }
    }
}

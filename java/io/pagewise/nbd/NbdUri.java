package io.pagewise.nbd;

import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLDecoder;
import java.net.UnixDomainSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/**
 * An NBD server address in the libnbd URI form: {@code nbd://host[:port]/export} (TCP, port 10809 by default) or
 * {@code nbd+unix:///export?socket=PATH} (Unix socket), and their TLS forms {@code nbds://} and
 * {@code nbds+unix://}, which take libnbd's {@code tls-certificates=DIR} query (see {@link TlsCertificates}). Without
 * it the server is verified against the JDK's default trust store. libnbd's {@code tls-psk-file} is refused:
 * the JDK's TLS has no pre-shared keys.
 *
 * @param address         where the server listens: an unresolved {@link InetSocketAddress} (the host is looked up
 *                        when connecting) or a {@link UnixDomainSocketAddress}
 * @param exportName      the export's name, decoded ("" for the default export)
 * @param text            the URI as written
 * @param tls             true for the {@code nbds} schemes: the connection must use TLS
 * @param tlsCertificates the {@code tls-certificates} directory, or null for none
 */
public record NbdUri(SocketAddress address, String exportName, String text, boolean tls, Path tlsCertificates) {
    /**
     * A URI without TLS.
     *
     * @param address    where the server listens: an {@link InetSocketAddress} or a {@link UnixDomainSocketAddress}
     * @param exportName the export's name, decoded ("" for the default export)
     * @param text       the URI as written
     */
    public NbdUri(SocketAddress address, String exportName, String text) {
        this(address, exportName, text, false, null);
    }

    /** The port {@code nbd://} URIs use when they name none: 10809, NBD's registered port. */
    public static final int DEFAULT_PORT = 10809;

    /**
     * {@return true when text starts like an NBD URI}, so that callers can tell it from a file name
     *
     * @param text a command-line argument or other string
     */
    public static boolean looksLikeUri(String text) {
        return text.startsWith("nbd://") || text.startsWith("nbd+unix://") || text.startsWith("nbds://")
                || text.startsWith("nbds+unix://") || text.startsWith("nbd+tcp://")
                || text.startsWith("nbds+tcp://");
    }

    /**
     * Parses an NBD URI.
     *
     * @param text the URI
     * @return the parsed address and export name, with text as given
     * @throws IllegalArgumentException when text is not an NBD URI, names no host or socket, or asks for TLS-PSK
     */
    public static NbdUri parse(String text) {
        URI uri;
        try {
            uri = new URI(text);
        } catch (URISyntaxException e) {
            throw new IllegalArgumentException("not an NBD URI: " + text + " (" + e.getMessage() + ")");
        }
        String scheme = uri.getScheme() == null ? "" : uri.getScheme();
        String path = uri.getRawPath() == null ? "" : uri.getRawPath();
        String exportName = decode(path.startsWith("/") ? path.substring(1) : path);
        boolean tls = scheme.startsWith("nbds");
        String certificates = queryParameter(uri.getRawQuery(), "tls-certificates");
        if (queryParameter(uri.getRawQuery(), "tls-psk-file") != null) {
            throw new IllegalArgumentException("NBD URI " + text + ": tls-psk-file is not supported (the JDK's TLS has no "
                    + "pre-shared keys); use certificates with tls-certificates=DIR");
        }
        if (certificates != null && !tls) {
            throw new IllegalArgumentException("NBD URI " + text + ": tls-certificates needs a TLS scheme (nbds:// or nbds+unix://)");
        }
        if (certificates != null && certificates.isEmpty()) {
            throw new IllegalArgumentException("NBD URI " + text + ": tls-certificates= names no directory");
        }
        Path tlsCertificates = certificates == null ? null : Path.of(certificates);
        switch (scheme) {
            case "nbd":
            case "nbd+tcp":
            case "nbds":
            case "nbds+tcp": {
                String host = uri.getHost();
                if (host == null || host.isEmpty()) {
                    throw new IllegalArgumentException("NBD URI " + text + " names no host (nbd://HOST[:PORT]/EXPORT)");
                }
                if (host.startsWith("[") && host.endsWith("]")) host = host.substring(1, host.length() - 1);
                int port = uri.getPort() < 0 ? DEFAULT_PORT : uri.getPort();
                // Unresolved: parsing does no network I/O; NbdClient looks the host up when it connects.
                return new NbdUri(InetSocketAddress.createUnresolved(host, port), exportName, text, tls, tlsCertificates);
            }
            case "nbd+unix":
            case "nbds+unix": {
                String socket = queryParameter(uri.getRawQuery(), "socket");
                if (socket == null || socket.isEmpty()) {
                    throw new IllegalArgumentException("NBD URI " + text + " needs ?socket=PATH");
                }
                return new NbdUri(UnixDomainSocketAddress.of(Path.of(socket)), exportName, text, tls, tlsCertificates);
            }
            default:
                throw new IllegalArgumentException("not an NBD URI: " + text
                        + " (expected nbd[s]://HOST[:PORT]/EXPORT or nbd[s]+unix:///EXPORT?socket=PATH)");
        }
    }

    private static String queryParameter(String rawQuery, String name) {
        if (rawQuery == null) return null;
        for (String pair : rawQuery.split("&")) {
            int eq = pair.indexOf('=');
            String key = decode(eq < 0 ? pair : pair.substring(0, eq));
            if (key.equals(name)) return eq < 0 ? "" : decode(pair.substring(eq + 1));
        }
        return null;
    }

    private static String decode(String text) {
        return URLDecoder.decode(text.replace("+", "%2B"), StandardCharsets.UTF_8);
    }

    /** {@return the URI as written} */
    @Override
    public String toString() {
        return text;
    }
}

package io.pagewise.nbd;

import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLDecoder;
import java.net.UnixDomainSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * An NBD server address in the form of the NBD URI standard and libnbd: {@code nbd://host[:port]/export} (TCP, port
 * 10809 by default) or {@code nbd+unix:///export?socket=PATH} (Unix socket), and their TLS forms {@code nbds://}
 * and {@code nbds+unix://}. The TLS forms take these query parameters:
 * <ul>
 *   <li>{@code tls-certificates=DIR} (libnbd's): the CA to verify the server against and the client's certificate
 *       (see {@link TlsCertificates}); without it, the JDK's default trust store;</li>
 *   <li>{@code tls-hostname=NAME}: the name the server's certificate must carry, instead of the URI's host (on a
 *       Unix socket, where there is no host, the name is not checked without it);</li>
 *   <li>{@code tls-verify-peer=false} (or {@code 0}, {@code no}, {@code off}): the server's certificate is not
 *       verified at all;</li>
 *   <li>{@code tls-type=x509}, the only kind there is here.</li>
 * </ul>
 * Any other query parameter is refused, as the standard asks, and so are the ones for TLS with pre-shared keys
 * ({@code tls-psk-file}, {@code tls-username}, {@code tls-type=psk}): the JDK's TLS has none.
 *
 * @param address         where the server listens: an unresolved {@link InetSocketAddress} (the host is looked up
 *                        when connecting) or a {@link UnixDomainSocketAddress}
 * @param exportName      the export's name, decoded ("" for the default export)
 * @param text            the URI as written
 * @param tls             true for the {@code nbds} schemes: the connection must use TLS
 * @param tlsCertificates the {@code tls-certificates} directory, or null for none
 * @param tlsHostname     the {@code tls-hostname}, or null for none
 * @param tlsVerifyPeer   false when {@code tls-verify-peer} turns verifying the server off
 */
public record NbdUri(SocketAddress address, String exportName, String text, boolean tls, Path tlsCertificates,
        String tlsHostname, boolean tlsVerifyPeer) {
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

    /**
     * A URI that verifies the server by the name in its address, if any.
     *
     * @param address         where the server listens: an {@link InetSocketAddress} or a {@link UnixDomainSocketAddress}
     * @param exportName      the export's name, decoded ("" for the default export)
     * @param text            the URI as written
     * @param tls             true when the connection must use TLS
     * @param tlsCertificates the {@code tls-certificates} directory, or null for none
     */
    public NbdUri(SocketAddress address, String exportName, String text, boolean tls, Path tlsCertificates) {
        this(address, exportName, text, tls, tlsCertificates, null, true);
    }

    /** The query parameters parse() knows. */
    private static final List<String> KNOWN_PARAMETERS =
            List.of("socket", "tls-certificates", "tls-hostname", "tls-verify-peer", "tls-type");

    /** The schemes parse() takes: nbd, nbds, nbd+unix, nbds+unix, and nbd+tcp and nbds+tcp (the same as nbd, nbds). */
    public static final List<String> SCHEMES = List.of("nbd", "nbds", "nbd+unix", "nbds+unix", "nbd+tcp", "nbds+tcp");

    /** The port {@code nbd://} URIs use when they name none: 10809, NBD's registered port. */
    public static final int DEFAULT_PORT = 10809;

    /**
     * {@return true when text starts like an NBD URI}, so that callers can tell it from a file name
     *
     * @param text a command-line argument or other string
     */
    public static boolean looksLikeUri(String text) {
        return SCHEMES.stream().anyMatch(scheme -> text.startsWith(scheme + "://"));
    }

    /**
     * Parses an NBD URI.
     *
     * @param text the URI
     * @return the parsed address and export name, with text as given
     * @throws IllegalArgumentException when text is not an NBD URI (also one of its schemes without //), names no host,
     *                                  port or socket, has a query parameter it does not know or a TLS one without a
     *                                  TLS scheme, or asks for TLS-PSK
     */
    public static NbdUri parse(String text) {
        for (String scheme : SCHEMES) {
            if (text.startsWith(scheme + ":") && !text.startsWith(scheme + "://")) {
                // nbd:/host/x or nbd:x would be read as a path or an opaque URI with no host; libnbd's words.
                throw new IllegalArgumentException("NBD URI " + text + " must begin with " + scheme + "://"
                        + (scheme.endsWith("+unix") ? " (" + scheme + ":///EXPORT?socket=PATH)"
                        : " (" + scheme + "://HOST[:PORT]/EXPORT)"));
            }
        }
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
        String query = uri.getRawQuery();
        checkParameters(text, query, tls);
        String certificates = queryParameter(query, "tls-certificates");
        if (certificates != null && certificates.isEmpty()) {
            throw new IllegalArgumentException("NBD URI " + text + ": tls-certificates= names no directory");
        }
        String hostname = queryParameter(query, "tls-hostname");
        if (hostname != null && hostname.isEmpty()) {
            throw new IllegalArgumentException("NBD URI " + text + ": tls-hostname= names no host");
        }
        boolean verifyPeer = verifyPeer(text, queryParameter(query, "tls-verify-peer"));
        Path tlsCertificates = certificates == null ? null : Path.of(certificates);
        switch (scheme) {
            case "nbd":
            case "nbd+tcp":
            case "nbds":
            case "nbds+tcp": {
                String host = uri.getHost();
                if (host == null || host.isEmpty()) {
                    // java.net.URI drops the host too when the port is not a number: say which it was.
                    String authority = uri.getRawAuthority();
                    int colon = authority == null ? -1 : authority.lastIndexOf(':');
                    if (colon > 0 && !authority.endsWith("]")) {
                        throw new IllegalArgumentException("NBD URI " + text + ": port '" + authority.substring(colon + 1)
                                + "' is not a number (nbd://HOST[:PORT]/EXPORT)");
                    }
                    throw new IllegalArgumentException("NBD URI " + text + " names no host (nbd://HOST[:PORT]/EXPORT)");
                }
                if (host.startsWith("[") && host.endsWith("]")) host = host.substring(1, host.length() - 1);
                if (uri.getPort() == 0 || uri.getPort() > 65535) {
                    throw new IllegalArgumentException("NBD URI " + text + ": port " + uri.getPort()
                            + " is out of range (1 to 65535)");
                }
                int port = uri.getPort() < 0 ? DEFAULT_PORT : uri.getPort();
                // Unresolved: parsing does no network I/O; NbdClient looks the host up when it connects.
                if (queryParameter(query, "socket") != null) {
                    throw new IllegalArgumentException("NBD URI " + text + ": socket= is for nbd+unix:// and nbds+unix:// URIs");
                }
                return new NbdUri(InetSocketAddress.createUnresolved(host, port), exportName, text, tls, tlsCertificates,
                        hostname, verifyPeer);
            }
            case "nbd+unix":
            case "nbds+unix": {
                String socket = queryParameter(query, "socket");
                if (socket == null || socket.isEmpty()) {
                    throw new IllegalArgumentException("NBD URI " + text + " needs ?socket=PATH");
                }
                return new NbdUri(UnixDomainSocketAddress.of(Path.of(socket)), exportName, text, tls, tlsCertificates,
                        hostname, verifyPeer);
            }
            default:
                throw new IllegalArgumentException("not an NBD URI: " + text
                        + " (expected nbd[s]://HOST[:PORT]/EXPORT or nbd[s]+unix:///EXPORT?socket=PATH)");
        }
    }

    /** Refuses what the standard says to diagnose (unknown parameters), TLS-PSK, and TLS settings without TLS. */
    private static void checkParameters(String text, String rawQuery, boolean tls) {
        if (rawQuery == null || rawQuery.isEmpty()) return;
        for (String pair : rawQuery.split("&")) {
            int eq = pair.indexOf('=');
            String key = decode(eq < 0 ? pair : pair.substring(0, eq));
            if (key.equals("tls-psk-file") || key.equals("tls-username")) {
                throw new IllegalArgumentException("NBD URI " + text + ": " + key + " is not supported (it is for TLS with "
                        + "pre-shared keys, which the JDK's TLS does not have); use certificates with tls-certificates=DIR");
            }
            if (!KNOWN_PARAMETERS.contains(key)) {
                throw new IllegalArgumentException("NBD URI " + text + ": unknown query parameter '" + key + "' (known: "
                        + String.join(", ", KNOWN_PARAMETERS) + ")");
            }
            if (key.startsWith("tls-") && !tls) {
                throw new IllegalArgumentException("NBD URI " + text + ": " + key + " needs a TLS scheme (nbds:// or nbds+unix://)");
            }
        }
        String type = queryParameter(rawQuery, "tls-type");
        if (type != null && !type.equalsIgnoreCase("x509")) {
            throw new IllegalArgumentException("NBD URI " + text + ": tls-type=" + type + " is not supported"
                    + (type.equalsIgnoreCase("psk") ? " (the JDK's TLS has no pre-shared keys)" : "") + "; only x509 is");
        }
    }

    private static boolean verifyPeer(String text, String value) {
        if (value == null) return true;
        switch (value.toLowerCase(Locale.ROOT)) {
            case "1": case "true": case "yes": case "on": return true;
            case "0": case "false": case "no": case "off": return false;
            default:
                throw new IllegalArgumentException("NBD URI " + text + ": tls-verify-peer=" + value
                        + " is not a boolean (true/false, 1/0, yes/no, on/off)");
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

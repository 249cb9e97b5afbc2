package io.pagewise.nbd.server;

import io.pagewise.nbd.server.service.Listener;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;

/** An export's libnbd-style URI: {@code nbd+unix:///NAME?socket=PATH} or {@code nbd://HOST:PORT/NAME}. */
final class ServerUri {
    private ServerUri() {}

    /** {@return the URI of the export on the listener, with a TLS scheme ({@code nbds}) when tlsRequired} */
    static String of(Listener listener, boolean tlsRequired, String exportName) {
        String name = encode(exportName);
        String scheme = tlsRequired ? "nbds" : "nbd";
        if (listener.isUnix()) return scheme + "+unix:///" + name + "?socket=" + listener.socketFile();
        InetSocketAddress inet = (InetSocketAddress) listener.address();
        InetAddress host = inet.getAddress();
        if (host.isAnyLocalAddress()) host = InetAddress.getLoopbackAddress();
        String text = host.getHostAddress().replaceAll("%.*", "");
        if (text.contains(":")) text = "[" + (host.isLoopbackAddress() ? "::1" : text) + "]";
        return scheme + "://" + text + ":" + inet.getPort() + "/" + name;
    }

    /** Percent-encodes an export name for a URI: RFC 3986's unreserved characters stay as they are. */
    private static String encode(String name) {
        StringBuilder out = new StringBuilder();
        for (byte b : name.getBytes(StandardCharsets.UTF_8)) {
            char c = (char) (b & 0xff);
            if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || "-._~".indexOf(c) >= 0) {
                out.append(c);
            } else {
                out.append('%').append(String.format("%02X", b & 0xff));
            }
        }
        return out.toString();
    }
}

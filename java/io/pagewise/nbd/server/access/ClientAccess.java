package io.pagewise.nbd.server.access;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.file.attribute.UserPrincipal;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.Set;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSession;
import javax.security.auth.x500.X500Principal;
import jdk.net.ExtendedSocketOptions;
import jdk.net.UnixDomainPrincipal;

/**
 * Who may connect: TCP clients by address ({@link NbdServer.Builder#allow}), Unix-socket clients by the user the
 * kernel reports for the peer (SO_PEERCRED, {@link NbdServer.Builder#allowUsers}), TLS clients by the subject of their
 * certificate ({@link NbdServer.Builder#tlsAuthz}). Each check answers null to let the client in, else why not, for
 * the log line.
 */
public record ClientAccess(List<AddressRange> addresses, Set<UserPrincipal> users, Set<X500Principal> subjects) {
    static final ClientAccess OPEN = new ClientAccess(List.of(), Set.of(), Set.of());

    /** {@return null when the peer of a new connection may go on, else why it may not} */
    public String refusal(SocketChannel channel, boolean unix) {
        try {
            if (unix) {
                if (users.isEmpty()) return null;
                UnixDomainPrincipal peer = channel.getOption(ExtendedSocketOptions.SO_PEERCRED);
                return users.contains(peer.user()) ? null
                        : "user " + peer.user().getName() + " is not an allowed user (" + names(users) + ")";
            }
            if (addresses.isEmpty()) return null;
            SocketAddress remote = channel.getRemoteAddress();
            if (remote instanceof InetSocketAddress) {
                InetSocketAddress inet = (InetSocketAddress) remote;
                for (AddressRange range : addresses) {
                    if (range.contains(inet.getAddress())) return null;
                }
            }
            return "address " + AddressRange.describe(remote) + " is not in the allowed addresses " + addresses;
        } catch (IOException | UnsupportedOperationException e) {
            return "its credentials cannot be read: " + e.getMessage();
        }
    }

    /** {@return null when a TLS client's certificate subject is allowed (or any is), else why it is not} */
    public String refusal(SSLSession session) {
        if (subjects.isEmpty()) return null;
        Certificate[] chain;
        try {
            chain = session.getPeerCertificates();
        } catch (SSLPeerUnverifiedException e) {
            return "it presented no client certificate, and --tls-authz allows only listed subjects";
        }
        X500Principal subject = ((X509Certificate) chain[0]).getSubjectX500Principal();
        return subjects.contains(canonical(subject)) ? null
                : "certificate subject '" + subject.getName(X500Principal.RFC2253) + "' is not in the TLS allow-list";
    }

    /** Subjects compare in canonical form: case and spacing of the attribute values do not matter. */
    public static X500Principal canonical(X500Principal subject) {
        return new X500Principal(subject.getName(X500Principal.CANONICAL));
    }

    private static String names(Set<UserPrincipal> users) {
        return users.stream().map(UserPrincipal::getName).sorted().reduce((a, b) -> a + ", " + b).orElse("");
    }
}

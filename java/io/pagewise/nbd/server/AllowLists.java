package io.pagewise.nbd.server;

import io.pagewise.nbd.server.access.AddressRange;
import io.pagewise.nbd.server.access.ClientAccess;
import java.io.IOException;
import java.nio.file.FileSystems;
import java.nio.file.attribute.UserPrincipal;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import javax.security.auth.x500.X500Principal;

/**
 * Who may connect, as {@link NbdServer.Builder} collects it: client addresses, Unix-socket users and TLS subjects,
 * each parsed as it is added, so that a bad one is named at once. Empty lists let anyone in.
 */
final class AllowLists {
    private final List<AddressRange> addresses = new ArrayList<>();
    private final Set<UserPrincipal> users = new LinkedHashSet<>();
    private final Set<X500Principal> subjects = new LinkedHashSet<>();

    void addAddresses(String... cidrs) {
        for (String cidr : cidrs) addresses.add(AddressRange.parse(cidr));
    }

    void addUsers(String... names) {
        var lookup = FileSystems.getDefault().getUserPrincipalLookupService();
        for (String user : names) {
            try {
                users.add(lookup.lookupPrincipalByName(user.trim()));
            } catch (IOException e) {
                throw new IllegalArgumentException("allowed user '" + user + "' is neither a user name nor a uid");
            }
        }
    }

    void addSubjects(Collection<String> names) {
        for (String subject : names) {
            try {
                subjects.add(ClientAccess.canonical(new X500Principal(subject)));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("TLS client subject '" + subject + "' is not a distinguished name: "
                        + e.getMessage());
            }
        }
    }

    /** {@return the lists as the server checks them, copied} */
    ClientAccess access() {
        return new ClientAccess(List.copyOf(addresses), Set.copyOf(users), Set.copyOf(subjects));
    }
}

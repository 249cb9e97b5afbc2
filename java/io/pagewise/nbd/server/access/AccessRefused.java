package io.pagewise.nbd.server.access;

import java.io.IOException;

/**
 * A client that the server's allow-lists do not let in ({@link ClientAccess}): its connection is closed, the refusal
 * logged at WARNING (at most one line a second) and counted in {@link ServerStats#accessRefusals()}.
 */
public final class AccessRefused extends IOException {
    public AccessRefused(String message) {
        super(message);
    }
}

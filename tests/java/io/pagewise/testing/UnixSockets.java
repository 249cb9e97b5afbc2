package io.pagewise.testing;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Whether a server listens on a Unix socket yet, found without connecting to it. */
public final class UnixSockets {
    /** __SO_ACCEPTCON in /proc/net/unix's flags: the socket listens. */
    private static final int ACCEPTING = 0x10000;

    private UnixSockets() {}

    /**
     * {@return whether some process listens on the socket at path} A server makes the file when it binds, before it
     * listens, so the file alone is not enough: a client connecting in between is refused.
     */
    public static boolean listening(Path socket) throws IOException {
        String path = socket.toAbsolutePath().toString();
        for (String line : Files.readAllLines(Path.of("/proc/net/unix"))) {
            String[] fields = line.trim().split("\\s+");
            if (fields.length >= 8 && fields[7].equals(path) && fields[3].matches("[0-9A-Fa-f]+")
                    && (Integer.parseInt(fields[3], 16) & ACCEPTING) != 0) {
                return true;
            }
        }
        return false;
    }
}

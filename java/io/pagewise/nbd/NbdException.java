package io.pagewise.nbd;

import io.pagewise.internal.Errno;
import java.io.IOException;

/**
 * An NBD error: one of the protocol's error values (the constants here) and a message, on either side of the wire.
 *
 * <p>An {@link Export} throws one to answer a request with that error; the server sends the value and the message to
 * the client. {@link NbdClient} fails a request the server answered with an error with one that names the command,
 * the range and the server, for example
 * {@code NBD WRITE at 1048576 (+65536) failed: ENOSPC (no space left) from nbd+unix:///?socket=/run/x.sock}. An export
 * that forwards to another server through NbdClient can rethrow it, and its client sees the same error.
 */
public class NbdException extends IOException {
    /** Operation not permitted, such as a write to a read-only export: 1. */
    public static final int EPERM = Errno.EPERM;
    /** Input/output error, and the answer to any failure without a nearer value: 5. */
    public static final int EIO = Errno.EIO;
    /** Out of memory: 12. */
    public static final int ENOMEM = Errno.ENOMEM;
    /** Invalid argument, such as an unknown command or flag: 22. */
    public static final int EINVAL = Errno.EINVAL;
    /** No space left, also for a write past the end of the export: 28. */
    public static final int ENOSPC = Errno.ENOSPC;
    /** Value too large: 75. */
    public static final int EOVERFLOW = Errno.EOVERFLOW;
    /** Not supported, such as a fast zero that would not be fast: 95. */
    public static final int ENOTSUP = Errno.EOPNOTSUPP;
    /** The server is shutting down: 108. */
    public static final int ESHUTDOWN = Errno.ESHUTDOWN;

    /** The NBD error value. */
    private final int error;
    /** The request's command, or null for an export's answer. */
    private final String command;
    /** The start of the request's range, or -1. */
    private final long offset;
    /** The length of the request's range. */
    private final long length;

    /**
     * An export's answer to a request: the server replies with the error and sends the message along.
     *
     * @param error   the NBD error value, one of the constants of this class
     * @param message what went wrong, for the client and the server's log
     */
    public NbdException(int error, String message) {
        super(message);
        this.error = error;
        this.command = null;
        this.offset = -1;
        this.length = 0;
    }

    /**
     * A server's error reply to a request, with a message made of the parts.
     *
     * @param command       the request's command, such as {@code WRITE}
     * @param offset        the start of the request's range
     * @param length        the length of the request's range
     * @param error         the NBD error value, such as 28 for ENOSPC
     * @param serverMessage the text the server sent with the error, or null or empty for none
     * @param server        the server's URI, or null
     */
    public NbdException(String command, long offset, long length, int error, String serverMessage, String server) {
        super("NBD " + command + " at " + offset + " (+" + length + ") failed: " + errorName(error)
                + (serverMessage == null || serverMessage.isEmpty() ? "" : " (" + serverMessage + ")")
                + (server == null ? "" : " from " + server));
        this.command = command;
        this.offset = offset;
        this.length = length;
        this.error = error;
    }

    /** {@return the request's command, such as {@code WRITE}, or null for an export's answer} */
    public String command() { return command; }

    /** {@return the start of the request's range, or -1 for an export's answer} */
    public long offset() { return offset; }

    /** {@return the length of the request's range, 0 for an export's answer} */
    public long length() { return length; }

    /** {@return the NBD error value (the errno numbering of the spec), such as 28 for ENOSPC} */
    public int error() { return error; }

    /**
     * {@return the name of an NBD error value, such as {@code ENOSPC}, or "error N" for a value the spec does not name}
     *
     * @param error the NBD error value
     */
    public static String errorName(int error) {
        return Errno.nbdName(error);
    }
}

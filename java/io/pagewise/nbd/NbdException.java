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
    /** Operation not permitted, such as a write to a read-only export. */
    public static final int EPERM = Errno.EPERM;
    public static final int EIO = Errno.EIO;
    public static final int ENOMEM = Errno.ENOMEM;
    public static final int EINVAL = Errno.EINVAL;
    /** No space left; also for a write past the end of the export. */
    public static final int ENOSPC = Errno.ENOSPC;
    public static final int EOVERFLOW = Errno.EOVERFLOW;
    /** Not supported, such as a fast zero that would not be fast. */
    public static final int ENOTSUP = Errno.EOPNOTSUPP;
    /** The server is shutting down. */
    public static final int ESHUTDOWN = Errno.ESHUTDOWN;

    private final int error;
    private final String command;
    private final long offset;
    private final long length;

    /** An export's answer to a request: the server replies with error and sends message along. */
    public NbdException(int error, String message) {
        super(message);
        this.error = error;
        this.command = null;
        this.offset = -1;
        this.length = 0;
    }

    /** The server's answer to a request: command at offset (+length) failed with error and serverMessage. */
    public NbdException(String command, long offset, long length, int error, String serverMessage, String server) {
        super("NBD " + command + " at " + offset + " (+" + length + ") failed: " + errorName(error)
                + (serverMessage == null || serverMessage.isEmpty() ? "" : " (" + serverMessage + ")")
                + (server == null ? "" : " from " + server));
        this.command = command;
        this.offset = offset;
        this.length = length;
        this.error = error;
    }

    /** The request's command, such as {@code WRITE}, or null for an export's answer. */
    public String command() { return command; }

    /** The start of the request's range, or -1 for an export's answer. */
    public long offset() { return offset; }

    public long length() { return length; }

    /** The NBD error value (the errno numbering of the spec), such as 28 for ENOSPC. */
    public int error() { return error; }

    /** The name of an NBD error value, such as {@code ENOSPC}. */
    public static String errorName(int error) {
        return Errno.nbdName(error);
    }
}

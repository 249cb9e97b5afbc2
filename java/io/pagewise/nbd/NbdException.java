package io.pagewise.nbd;

import io.pagewise.device.DeviceException;
import io.pagewise.internal.Errno;

/**
 * An NBD error: one of the protocol's error values (errno numbers, the constants of {@link DeviceException}) and a
 * message, on either side of the wire.
 *
 * <p>{@link io.pagewise.nbd.client.NbdClient} fails a request the server answered with an error with one that names the command,
 * the range and the server, for example
 * {@code NBD WRITE at 1048576 (+65536) failed: ENOSPC (no space left) from nbd+unix:///?socket=/run/x.sock}. A device
 * that forwards to another server through NbdClient can rethrow it, and its client sees the same error.
 */
public class NbdException extends DeviceException {
    private static final long serialVersionUID = 1L;

    /** The request's command. */
    private final String command;
    /** The start of the request's range, or -1. */
    private final long offset;
    /** The length of the request's range. */
    private final long length;

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
        super(error, "NBD " + command + " at " + offset + " (+" + length + ") failed: " + errorName(error)
                + (serverMessage == null || serverMessage.isEmpty() ? "" : " (" + serverMessage + ")")
                + (server == null ? "" : " from " + server));
        this.command = command;
        this.offset = offset;
        this.length = length;
    }

    /** {@return the request's command, such as {@code WRITE}, } */
    public String command() { return command; }

    /** {@return the start of the request's range, } */
    public long offset() { return offset; }

    /** {@return the length of the request's range} */
    public long length() { return length; }

    /** {@return the NBD error value (the errno numbering of the spec), such as 28 for ENOSPC} */
    public int error() { return errno(); }

    /**
     * {@return the name of an NBD error value, such as {@code ENOSPC}, or "error N" for a value the spec does not name}
     *
     * @param error the NBD error value
     */
    public static String errorName(int error) {
        return Errno.nbdName(error);
    }
}

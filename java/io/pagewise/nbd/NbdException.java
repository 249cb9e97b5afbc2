package io.pagewise.nbd;

import java.io.IOException;

/**
 * The server answered a request with an error. The message names the command, the range and the NBD error, for
 * example {@code NBD WRITE at 1048576 (+65536) failed: ENOSPC (no space left) from nbd+unix:///?socket=/run/x.sock}.
 */
public class NbdException extends IOException {
    /** The request's command. */
    private final String command;
    /** The start of the request's range. */
    private final long offset;
    /** The length of the request's range. */
    private final long length;
    /** The NBD error value. */
    private final int error;

    /**
     * An error reply, with a message made of the parts.
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

    /** {@return the request's command, such as {@code WRITE}} */
    public String command() { return command; }

    /** {@return the start of the request's range} */
    public long offset() { return offset; }

    /** {@return the length of the request's range} */
    public long length() { return length; }

    /** {@return the NBD error value (the errno numbering of the spec), such as 28 for ENOSPC} */
    public int error() { return error; }

    /**
     * {@return the name of an NBD error value, such as {@code ENOSPC}, or "error N" for a value the spec does not name}
     *
     * @param error the NBD error value
     */
    public static String errorName(int error) {
        switch (error) {
            case 1: return "EPERM";
            case 5: return "EIO";
            case 12: return "ENOMEM";
            case 22: return "EINVAL";
            case 28: return "ENOSPC";
            case 75: return "EOVERFLOW";
            case 95: return "ENOTSUP";
            case 108: return "ESHUTDOWN";
            default: return "error " + error;
        }
    }
}

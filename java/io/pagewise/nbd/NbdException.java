package io.pagewise.nbd;

import java.io.IOException;

/**
 * The server answered a request with an error. The message names the command, the range and the NBD error, for
 * example {@code NBD WRITE at 1048576 (+65536) failed: ENOSPC (no space left) from nbd+unix:///?socket=/run/x.sock}.
 */
public class NbdException extends IOException {
    private final String command;
    private final long offset;
    private final long length;
    private final int error;

    public NbdException(String command, long offset, long length, int error, String serverMessage, String server) {
        super("NBD " + command + " at " + offset + " (+" + length + ") failed: " + errorName(error)
                + (serverMessage == null || serverMessage.isEmpty() ? "" : " (" + serverMessage + ")")
                + (server == null ? "" : " from " + server));
        this.command = command;
        this.offset = offset;
        this.length = length;
        this.error = error;
    }

    /** The request's command, such as {@code WRITE}. */
    public String command() { return command; }

    public long offset() { return offset; }

    public long length() { return length; }

    /** The NBD error value (the errno numbering of the spec), such as 28 for ENOSPC. */
    public int error() { return error; }

    /** The name of an NBD error value, such as {@code ENOSPC}. */
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

package io.pagewise.nbd;

import java.io.IOException;

/** An export's way to answer a request with a specific NBD error (EINVAL, ENOSPC, ENOTSUP...). */
public class ExportException extends IOException {
    /** The NBD error value. */
    private final int nbdError;

    /**
     * An error for the server to answer a request with.
     *
     * @param nbdError the NBD error value, one of the constants below
     * @param message  what went wrong; clients that negotiated structured replies receive it
     */
    public ExportException(int nbdError, String message) {
        super(message);
        this.nbdError = nbdError;
    }

    /** {@return the NBD error value, such as 22 for EINVAL} */
    public int nbdError() {
        return nbdError;
    }

    /** Operation not permitted (1), such as a write to a read-only export. */
    public static final int EPERM = Protocol.EPERM;
    /** Input/output error (5). */
    public static final int EIO = Protocol.EIO;
    /** Invalid argument (22). */
    public static final int EINVAL = Protocol.EINVAL;
    /** No space left (28). */
    public static final int ENOSPC = Protocol.ENOSPC;
    /** Operation not supported (95), such as a fast zero that would be slow. */
    public static final int ENOTSUP = Protocol.ENOTSUP;
}

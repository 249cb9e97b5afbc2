package io.pagewise.nbd;

import io.pagewise.nbd.wire.Protocol;
import java.io.IOException;

/** An export's way to answer a request with a specific NBD error (EINVAL, ENOSPC, ENOTSUP...). */
public class ExportException extends IOException {
    private final int nbdError;

    public ExportException(int nbdError, String message) {
        super(message);
        this.nbdError = nbdError;
    }

    /** The NBD error value, such as 22 for EINVAL. */
    public int nbdError() {
        return nbdError;
    }

    public static final int EPERM = Protocol.EPERM;
    public static final int EIO = Protocol.EIO;
    public static final int EINVAL = Protocol.EINVAL;
    public static final int ENOSPC = Protocol.ENOSPC;
    public static final int ENOTSUP = Protocol.ENOTSUP;
}

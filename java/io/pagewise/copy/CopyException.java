package io.pagewise.copy;

import java.io.IOException;

/** A copy failed; the message says which side, what, and at which offset. */
public class CopyException extends IOException {
    /** The offset of the failed request, or -1. */
    private final long offset;

    /**
     * A failed copy.
     *
     * @param message which side failed, what, and where
     * @param offset  the offset of the failed request, or -1 when the failure was not tied to one
     * @param cause   the failure of the endpoint, or null
     */
    public CopyException(String message, long offset, Throwable cause) {
        super(message, cause);
        this.offset = offset;
    }

    /** {@return the offset of the failed request, or -1 when the failure was not tied to one} */
    public long offset() { return offset; }
}

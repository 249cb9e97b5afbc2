package io.pagewise.copy;

import java.io.IOException;

/** A copy failed; the message says which side, what, and at which offset. */
public class CopyException extends IOException {
    private final long offset;

    public CopyException(String message, long offset, Throwable cause) {
        super(message, cause);
        this.offset = offset;
    }

    /** The offset of the failed request, or -1 when the failure was not tied to one. */
    public long offset() { return offset; }
}

package io.pagewise.internal;

import java.nio.channels.ClosedChannelException;

/** A {@link ClosedChannelException} (which has no message of its own) that says what was closed. */
public final class ClosedWithMessage extends ClosedChannelException {
    private final String message;

    /** @param message what is closed, such as {@code /data/disk.img is closed} */
    public ClosedWithMessage(String message) {
        this.message = message;
    }

    @Override
    public String getMessage() {
        return message;
    }
}

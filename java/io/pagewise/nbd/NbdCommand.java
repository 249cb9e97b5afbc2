package io.pagewise.nbd;

import io.pagewise.nbd.wire.Protocol;

/** The NBD commands, in the order of their numbers on the wire; {@link io.pagewise.nbd.server.ServerStats} counts per command. */
public enum NbdCommand {
    /** NBD_CMD_READ: 0. */
    READ(Protocol.CMD_READ),
    /** NBD_CMD_WRITE: 1. */
    WRITE(Protocol.CMD_WRITE),
    /** NBD_CMD_DISC, the client's goodbye: 2. */
    DISC(Protocol.CMD_DISC),
    /** NBD_CMD_FLUSH: 3. */
    FLUSH(Protocol.CMD_FLUSH),
    /** NBD_CMD_TRIM: 4. */
    TRIM(Protocol.CMD_TRIM),
    /** NBD_CMD_CACHE: 5. */
    CACHE(Protocol.CMD_CACHE),
    /** NBD_CMD_WRITE_ZEROES: 6. */
    WRITE_ZEROES(Protocol.CMD_WRITE_ZEROES),
    /** NBD_CMD_BLOCK_STATUS: 7. */
    BLOCK_STATUS(Protocol.CMD_BLOCK_STATUS);

    private final int code;

    NbdCommand(int code) {
        this.code = code;
    }

    /** {@return the command's number on the wire} */
    public int code() { return code; }
}

package io.pagewise.nbd.client;

/**
 * One descriptor of a BLOCK_STATUS reply for a meta context: a range and its status flags, whose meaning the context
 * defines (for {@code qemu:dirty-bitmap:NAME}, bit 0 set means the range changed).
 *
 * @param offset where the range starts
 * @param length its length in bytes
 * @param flags  the status flags the server sent for it
 */
public record BlockStatus(long offset, long length, int flags) {
    /** {@return the end of the range} */
    public long end() { return offset + length; }
}

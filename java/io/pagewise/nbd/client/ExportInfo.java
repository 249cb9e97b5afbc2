package io.pagewise.nbd.client;

import io.pagewise.nbd.wire.Protocol;

/**
 * What a server told the client about an export during the handshake.
 *
 * @param size              export size in bytes
 * @param transmissionFlags the NBD_FLAG_* transmission flags
 * @param minimumBlock      requests must be aligned to this (1 when the server did not say)
 * @param preferredBlock    requests of this size and alignment avoid read-modify-write on the server
 * @param maximumPayload    the largest READ or WRITE payload the server accepts
 * @param structuredReplies the server sends structured replies (holes in READ, BLOCK_STATUS)
 * @param allocationContext the id of {@code base:allocation}, or -1 when BLOCK_STATUS is unavailable
 * @param extendedHeaders   the connection uses extended headers: 64-bit lengths for TRIM, WRITE_ZEROES and
 *                          BLOCK_STATUS (structuredReplies is then true as well)
 */
public record ExportInfo(long size, int transmissionFlags, int minimumBlock, int preferredBlock, int maximumPayload,
                         boolean structuredReplies, long allocationContext, boolean extendedHeaders) {
    /**
     * What a server told a client that did not negotiate extended headers.
     *
     * @param size              export size in bytes
     * @param transmissionFlags the NBD_FLAG_* transmission flags
     * @param minimumBlock      requests must be aligned to this
     * @param preferredBlock    requests of this size and alignment avoid read-modify-write on the server
     * @param maximumPayload    the largest READ or WRITE payload the server accepts
     * @param structuredReplies the server sends structured replies
     * @param allocationContext the id of {@code base:allocation}, or -1
     */
    public ExportInfo(long size, int transmissionFlags, int minimumBlock, int preferredBlock, int maximumPayload,
                      boolean structuredReplies, long allocationContext) {
        this(size, transmissionFlags, minimumBlock, preferredBlock, maximumPayload, structuredReplies, allocationContext,
                false);
    }

    /** {@return true when the server refuses writes} */
    public boolean isReadOnly() { return has(Protocol.TF_READ_ONLY); }

    /** {@return true when the server takes FLUSH} */
    public boolean canFlush() { return has(Protocol.TF_SEND_FLUSH); }

    /** {@return true when writes may ask for FUA (durable on reply)} */
    public boolean canFua() { return has(Protocol.TF_SEND_FUA); }

    /** {@return true when the server takes TRIM} */
    public boolean canTrim() { return has(Protocol.TF_SEND_TRIM); }

    /** {@return true when the server takes WRITE_ZEROES} */
    public boolean canZero() { return has(Protocol.TF_SEND_WRITE_ZEROES); }

    /** {@return true when the server takes WRITE_ZEROES with FAST_ZERO} */
    public boolean canFastZero() { return has(Protocol.TF_SEND_FAST_ZERO); }

    /** {@return true when the server takes CACHE} */
    public boolean canCache() { return has(Protocol.TF_SEND_CACHE); }

    /** {@return true when FLUSH on one connection covers writes made through the others (multi-conn)} */
    public boolean canMultiConn() { return has(Protocol.TF_CAN_MULTI_CONN); }

    /** {@return true when the server gave {@code base:allocation}, so BLOCK_STATUS tells holes from data} */
    public boolean canExtents() { return allocationContext >= 0; }

    private boolean has(int flag) {
        return (transmissionFlags & Protocol.TF_HAS_FLAGS) != 0 && (transmissionFlags & flag) != 0;
    }
}

package io.pagewise.nbd;

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
 */
public record ExportInfo(long size, int transmissionFlags, int minimumBlock, int preferredBlock, int maximumPayload,
                         boolean structuredReplies, long allocationContext) {
    public boolean isReadOnly() { return has(Protocol.TF_READ_ONLY); }

    public boolean canFlush() { return has(Protocol.TF_SEND_FLUSH); }

    public boolean canFua() { return has(Protocol.TF_SEND_FUA); }

    public boolean canTrim() { return has(Protocol.TF_SEND_TRIM); }

    public boolean canWriteZeroes() { return has(Protocol.TF_SEND_WRITE_ZEROES); }

    public boolean canMultiConn() { return has(Protocol.TF_CAN_MULTI_CONN); }

    public boolean hasBlockStatus() { return allocationContext >= 0; }

    private boolean has(int flag) {
        return (transmissionFlags & Protocol.TF_HAS_FLAGS) != 0 && (transmissionFlags & flag) != 0;
    }
}

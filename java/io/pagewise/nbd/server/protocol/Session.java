package io.pagewise.nbd.server.protocol;

import io.pagewise.device.BlockDevice;
import io.pagewise.nbd.server.ExportEntry;
import java.io.IOException;
import java.util.List;

/**
 * What a connection's handshake settled: the export, its flags and the reply style. structuredReplies means replies
 * in chunks, which extended headers also use; extendedHeaders means 32-byte requests and reply chunks with 64-bit
 * lengths instead of the compact ones. contexts are the meta contexts SET_META_CONTEXT selected, which BLOCK_STATUS
 * answers, one chunk each in this order.
 */
public record Session(ExportEntry entry, long size, int transmissionFlags, boolean structuredReplies,
               List<MetaContext> contexts, boolean extendedHeaders) {
    public Session {
        if (extendedHeaders && !structuredReplies) throw new IllegalArgumentException("extended headers reply in chunks");
        contexts = List.copyOf(contexts);
    }

    /** A session with base:allocation selected or nothing. */
    Session(ExportEntry entry, long size, int transmissionFlags, boolean structuredReplies, boolean allocationContext,
            boolean extendedHeaders) {
        this(entry, size, transmissionFlags, structuredReplies,
                allocationContext ? List.of(MetaContext.ALLOCATION) : List.of(), extendedHeaders);
    }

    /** A session with compact headers. */
    Session(ExportEntry entry, long size, int transmissionFlags, boolean structuredReplies, boolean allocationContext) {
        this(entry, size, transmissionFlags, structuredReplies, allocationContext, false);
    }

    /** This session over the export's view for one connection ({@code BlockDevice.forConnection}). */
    public Session forConnection() throws IOException {
        BlockDevice view = entry.device().forConnection();
        if (view == entry.device()) return this;
        ExportEntry viewed = new ExportEntry(entry.name(), entry.description(), view, entry.file());
        return new Session(viewed, size, transmissionFlags, structuredReplies, contexts, extendedHeaders);
    }
}

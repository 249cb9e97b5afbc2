package io.pagewise.nbd.server;

import io.pagewise.device.BlockDevice;
import java.io.IOException;

/** What a connection's handshake settled: the export, its flags and the reply style. */
record Session(ExportEntry entry, long size, int transmissionFlags, boolean structuredReplies,
               boolean allocationContext) {
    /** This session over the export's view for one connection ({@code BlockDevice.forConnection}). */
    Session forConnection() throws IOException {
        BlockDevice view = entry.device().forConnection();
        if (view == entry.device()) return this;
        return new Session(new ExportEntry(entry.name(), entry.description(), view), size, transmissionFlags,
                structuredReplies, allocationContext);
    }
}

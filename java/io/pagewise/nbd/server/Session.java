package io.pagewise.nbd.server;

/** What a connection's handshake settled: the export, its flags and the reply style. */
record Session(ExportEntry entry, long size, int transmissionFlags, boolean structuredReplies,
               boolean allocationContext) {}

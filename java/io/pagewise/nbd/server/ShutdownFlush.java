package io.pagewise.nbd.server;

import io.pagewise.device.Capability;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.channels.ClosedChannelException;

/** The last step of a server's stop: every export handed out that can flush is flushed, timed and counted. */
final class ShutdownFlush {
    private ShutdownFlush() {}

    /**
     * Flushes each of the exports, going on past a failure, which is logged at ERROR.
     *
     * @return the first failure, or null
     */
    static IOException flushAll(Iterable<ExportEntry> exports, ServerStats stats, System.Logger log) {
        IOException failure = null;
        for (ExportEntry entry : exports) {
            if (!entry.device().capabilities().has(Capability.FLUSH)) continue;
            long started = System.nanoTime();
            try {
                entry.device().flushAtShutdown();
                stats.flushedAtShutdown(System.nanoTime() - started, false);
            } catch (ClosedChannelException e) {
                // closed by its source (a replaced file of a directory) once its last client had gone: flushed then
            } catch (IOException e) {
                stats.flushedAtShutdown(System.nanoTime() - started, true);
                log.log(Level.ERROR, "flush of export '" + entry.name() + "' at shutdown failed: " + e.getMessage());
                if (failure == null) failure = e;
            }
        }
        return failure;
    }
}

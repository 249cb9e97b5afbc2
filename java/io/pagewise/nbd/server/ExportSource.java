package io.pagewise.nbd.server;

import java.io.IOException;
import java.util.List;

/**
 * Exports that may change while the server runs, asked at each {@code NBD_OPT_LIST} and each time a client names an
 * export ({@code NBD_OPT_INFO}, {@code NBD_OPT_GO}, {@code NBD_OPT_EXPORT_NAME}, {@code NBD_OPT_SET_META_CONTEXT}):
 * {@link DirectoryExports} serves the files of a directory, including those added later. Give one to
 * {@link NbdServer.Builder#exports(ExportSource)}. The source owns the devices it hands out: the server flushes the
 * writable ones when it stops, and whoever made the source closes it after the server.
 *
 * <p>Called from the server's connection threads, several at once.
 */
public interface ExportSource {
    /**
     * An export as {@code NBD_OPT_LIST} shows it.
     *
     * @param name        the export's name
     * @param description a line for humans, "" for none
     */
    record Listing(String name, String description) {}

    /**
     * {@return the exports there are now, in the order clients see them}
     *
     * @throws IOException when they cannot be listed (the client gets an error reply, the server goes on)
     */
    List<Listing> list() throws IOException;

    /**
     * {@return the export of that name, its device open, or null when there is none}; called again for each client
     * that asks, so a source may hand out the same entry again
     *
     * @param name the name a client asked for
     * @throws IOException when the export exists but cannot be opened (the client is told it cannot have it)
     */
    ExportEntry find(String name) throws IOException;

    /**
     * Tells the source that a client handed entry by {@link #find} has gone (its connection ended): called once for
     * each time find handed the entry to that client. A source that opens a file anew when it is replaced under its
     * name can close the old device once the last client that had it is gone. Does nothing by default.
     *
     * @param entry an entry find returned
     */
    default void released(ExportEntry entry) {}
}

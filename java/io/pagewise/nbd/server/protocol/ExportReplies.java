package io.pagewise.nbd.server.protocol;

import static io.pagewise.nbd.server.protocol.OptionChannel.utf8;
import static io.pagewise.nbd.wire.Protocol.*;

import io.pagewise.device.BlockDevice;
import io.pagewise.device.DeviceException;
import io.pagewise.internal.Errno;
import io.pagewise.nbd.server.ExportEntry;
import io.pagewise.nbd.server.ExportSource;
import io.pagewise.nbd.server.exports.Exports;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * The handshake's answers about exports: LIST, the export a client names (or why there is none) and the INFO replies
 * of INFO and GO. Keeps each entry the exports handed this client, to release when the connection ends; the log gets
 * the whole failure of an export that cannot be opened or listed, which the client is told without the server's paths.
 */
final class ExportReplies {
    private final Exports exports;
    private final OptionChannel options;
    private final int maxPayload;
    private final System.Logger log;
    private final String who;
    /** Each entry the exports handed this client, once per time: released when the connection ends. */
    private final List<ExportEntry> found = new ArrayList<>();

    ExportReplies(Exports exports, OptionChannel options, int maxPayload, System.Logger log, String who) {
        this.exports = exports;
        this.options = options;
        this.maxPayload = maxPayload;
        this.log = log;
        this.who = who;
    }

    /** {@return each export entry handed to this client, once per time} */
    List<ExportEntry> found() {
        return List.copyOf(found);
    }

    private ExportEntry found(ExportEntry entry) {
        if (entry != null) found.add(entry);
        return entry;
    }

    /** The export EXPORT_NAME names; that option has no error reply, so there being none ends the handshake. */
    ExportEntry forExportName(String name) throws IOException {
        ExportEntry entry;
        try {
            entry = found(exports.find(name));
        } catch (IOException e) {
            throw new ProtocolViolation("EXPORT_NAME asked for export '" + name + "', which cannot be opened: "
                    + e.getMessage());
        }
        if (entry == null) throw new ProtocolViolation("EXPORT_NAME asked for unknown export '" + name + "'");
        return entry;
    }

    /** The export a client named, or null after telling it there is none or that it cannot be opened. */
    ExportEntry find(int code, String name) throws IOException {
        ExportEntry entry;
        try {
            entry = found(exports.find(name));
        } catch (IOException e) {
            log.log(System.Logger.Level.WARNING, who + ": export '" + name + "' cannot be opened: " + e.getMessage());
            options.replyError(code, REP_ERR_UNKNOWN, "export '" + name + "' cannot be opened: " + reason(e));
            return null;
        }
        if (entry == null) options.replyError(code, REP_ERR_UNKNOWN, "no export named '" + name + "'");
        return entry;
    }

    /** Answers LIST: a SERVER reply for each export, then ACK. */
    void list(int code) throws IOException {
        List<ExportSource.Listing> listings;
        try {
            listings = exports.list();
        } catch (IOException e) {
            log.log(System.Logger.Level.WARNING, who + ": cannot list the exports: " + e.getMessage());
            options.replyError(code, REP_ERR_UNKNOWN, "cannot list the exports: " + reason(e));
            return;
        }
        for (ExportSource.Listing entry : listings) {
            // The name, then the description as the rest of the data, as nbdkit and libnbd read it.
            byte[] name = utf8(entry.name());
            byte[] description = utf8(entry.description());
            options.reply(code, REP_SERVER, ByteBuffer.allocate(4 + name.length + description.length)
                    .putInt(name.length).put(name).put(description).flip());
        }
        options.reply(code, REP_ACK, null);
    }

    /** The INFO replies of INFO or GO: the session's export, the name and description if asked, block sizes; ACK. */
    void info(int code, Session session, boolean wantName, boolean wantDescription) throws IOException {
        ExportEntry entry = session.entry();
        options.reply(code, REP_INFO, ByteBuffer.allocate(12).putShort((short) INFO_EXPORT).putLong(session.size())
                .putShort((short) session.transmissionFlags()).flip());
        if (wantName) {
            byte[] canonical = utf8(entry.name());
            options.reply(code, REP_INFO, ByteBuffer.allocate(2 + canonical.length).putShort((short) INFO_NAME)
                    .put(canonical).flip());
        }
        if (wantDescription && !entry.description().isEmpty()) {
            byte[] text = utf8(entry.description());
            options.reply(code, REP_INFO, ByteBuffer.allocate(2 + text.length).putShort((short) INFO_DESCRIPTION)
                    .put(text).flip());
        }
        // Sent even when not asked: harmless to clients that ignore it, and an O_DIRECT export's minimum matters.
        BlockDevice export = entry.device();
        int minimum = export.minimumBlockSize();
        int preferred = Math.max(export.preferredBlockSize(), minimum);
        int longest = Math.min(maxPayload, Math.max(export.maximumBlockSize(), minimum));
        int maximum = longest - longest % minimum;
        options.reply(code, REP_INFO, ByteBuffer.allocate(14).putShort((short) INFO_BLOCK_SIZE).putInt(minimum)
                .putInt(preferred).putInt(maximum).flip());
        options.reply(code, REP_ACK, null);
    }

    /**
     * A failure as a client may be told it: the errno's text and name, never the message naming the server's files.
     * The errno is the first one the failure or its causes tell (an opener may wrap the failed call), else EIO's.
     */
    private static String reason(IOException e) {
        int errno = DeviceException.EIO;
        for (Throwable t = e; t != null && errno == DeviceException.EIO; t = t.getCause()) {
            errno = DeviceException.errnoOf(t);
        }
        return Errno.description(errno) + " (" + Errno.name(errno) + ")";
    }
}

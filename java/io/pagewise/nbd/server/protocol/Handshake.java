package io.pagewise.nbd.server.protocol;

import static io.pagewise.nbd.wire.Protocol.*;

import io.pagewise.device.BlockDevice;
import io.pagewise.device.Capabilities;
import io.pagewise.device.Capability;
import io.pagewise.nbd.TlsMode;
import io.pagewise.nbd.server.ExportEntry;
import io.pagewise.nbd.server.ExportSource;
import io.pagewise.nbd.server.access.AccessRefused;
import io.pagewise.nbd.server.exports.Exports;
import io.pagewise.nbd.tls.TlsChannel;
import io.pagewise.nbd.tls.TlsSettings;
import io.pagewise.nbd.wire.SocketIo;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ByteChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import javax.net.ssl.SSLException;

/**
 * The fixed-newstyle handshake on one connection, up to the moment it enters transmission (GO or EXPORT_NAME) or
 * ends (ABORT, end of stream, protocol violation). STARTTLS upgrades the connection to TLS, after which the
 * haggling starts over; in {@link TlsMode#REQUIRE} nothing else is answered before it.
 */
public final class Handshake {
    /** Oversized options up to this length are read and dropped; longer ones close the connection. */
    static final long MAX_DISCARDED_OPTION_LENGTH = 16L << 20;
    /** Options a client refused after TLS gets answers to before the connection ends (libnbd sends four or five). */
    private static final int MAX_REFUSED_AFTER_TLS = 16;

    private final ByteChannel socket;
    private final TlsSettings tlsSettings;
    /** The socket, or the TLS channel over it once STARTTLS succeeded. */
    private ByteChannel channel;
    private TlsChannel tls;
    private final Exports exports;
    private final int maxPayload;
    private final BooleanSupplier stopping;
    private final Admission admission;
    private final System.Logger log;
    private final String who;
    /** Each entry the exports handed this client, once per time: released when the connection ends. */
    private final java.util.List<ExportEntry> found = new java.util.ArrayList<>();
    private final ByteBuffer header = ByteBuffer.allocate(16);
    /** Grown to the longest option received, up to MAX_OPTION_LENGTH: a silent client costs no 64 KiB buffer. */
    private ByteBuffer option = ByteBuffer.allocate(1024);
    private boolean noZeroes;
    private boolean structuredReplies;
    /** EXTENDED_HEADERS was acknowledged: it takes precedence over structured replies, and rules out EXPORT_NAME. */
    private boolean extendedHeaders;
    /** The export name the last SET_META_CONTEXT selected contexts for, or null. */
    private String contextsFor;
    /** What that SET_META_CONTEXT selected, in the order of the replies. */
    private List<MetaContext> selectedContexts = List.of();
    /** Set when EXPORT_NAME was refused entry: that option has no error reply, so the handshake ends. */
    private boolean exportNameRefused;
    /** Why a client that completed TLS may not come in, or null: its options are refused with that reason. */
    private String refusedAfterTls;
    private int optionsRefusedAfterTls;

    /** Asked before a client enters transmission (GO or EXPORT_NAME): whether the server takes it now. */
    @FunctionalInterface
    public interface Admission {
        /** {@return null to let the client in (the caller counts it as transmitting), else why it is refused} */
        String refusal();

        /** {@return null to go on with a client that has just completed TLS, else why it is not allowed in} */
        default String tlsRefusal(javax.net.ssl.SSLSession session) {
            return null;
        }
    }

    /** A handshake without TLS, on any channel (tests and fuzzing drive it in memory). */
    public Handshake(ByteChannel channel, Map<String, ExportEntry> exports, int maxPayload, BooleanSupplier stopping) {
        this(channel, TlsSettings.OFF, Exports.of(exports), maxPayload, stopping, () -> null,
                System.getLogger(Handshake.class.getName()), "connection");
    }

    /**
     * A handshake on a connection, which STARTTLS turns into TLS when tlsSettings offer it; log gets, under who, the
     * whole failure of an export that cannot be opened or listed, which the client is told without the server's paths.
     */
    public Handshake(ByteChannel channel, TlsSettings tlsSettings, Exports exports, int maxPayload,
                     BooleanSupplier stopping, Admission admission, System.Logger log, String who) {
        this.log = log;
        this.who = who;
        this.socket = channel;
        this.tlsSettings = tlsSettings;
        this.channel = channel;
        this.exports = exports;
        this.maxPayload = maxPayload;
        this.stopping = stopping;
        this.admission = admission;
    }

    /** {@return the TLS channel the connection goes on over, or null when the client did not ask for TLS} */
    /** {@return each export entry handed to this client, once per time}: to release when the connection ends */
    public java.util.List<ExportEntry> found() {
        return java.util.List.copyOf(found);
    }

    private ExportEntry found(ExportEntry entry) {
        if (entry != null) found.add(entry);
        return entry;
    }

    public TlsChannel tls() {
        return tls;
    }

    /** Runs the handshake; the session to serve, or null when the client left without choosing an export. */
    public Session negotiate() throws IOException {
        ByteBuffer greeting = ByteBuffer.allocate(18);
        greeting.putLong(NBDMAGIC).putLong(IHAVEOPT).putShort((short) (FLAG_FIXED_NEWSTYLE | FLAG_NO_ZEROES)).flip();
        SocketIo.writeFully(channel, greeting);

        ByteBuffer clientFlags = ByteBuffer.allocate(4);
        if (!SocketIo.readFully(channel, clientFlags)) return null;
        int flags = clientFlags.flip().getInt();
        if ((flags & ~KNOWN_CLIENT_FLAGS) != 0) {
            throw new ProtocolViolation("unknown client flags 0x" + Integer.toHexString(flags));
        }
        noZeroes = (flags & CLIENT_NO_ZEROES) != 0;

        while (true) {
            header.clear();
            if (!SocketIo.readFully(channel, header)) return null;
            header.flip();
            long magic = header.getLong();
            if (magic != IHAVEOPT) throw new ProtocolViolation("bad option magic 0x" + Long.toHexString(magic));
            int code = header.getInt();
            long length = Integer.toUnsignedLong(header.getInt());
            if (length > MAX_OPTION_LENGTH) {
                if (length > MAX_DISCARDED_OPTION_LENGTH) {
                    throw new ProtocolViolation("option " + optionName(code) + " claims " + length + " bytes of data");
                }
                SocketIo.skip(channel, length, option);
                replyError(code, REP_ERR_TOO_BIG, "option data of " + length + " bytes is over the limit of "
                        + MAX_OPTION_LENGTH);
                continue;
            }
            if (length > option.capacity()) option = ByteBuffer.allocate((int) length);
            option.clear().limit((int) length);
            SocketIo.readExactly(channel, option);
            option.flip();
            if (refusedAfterTls != null) {
                refuseAfterTls(code);
                continue;
            }
            if (stopping.getAsBoolean() && code != OPT_ABORT) {
                replyError(code, REP_ERR_SHUTDOWN, "server is shutting down");
                continue;
            }
            if (tls == null && tlsSettings.mode() == TlsMode.REQUIRE && code != OPT_STARTTLS && code != OPT_ABORT) {
                // EXPORT_NAME has no error reply: the spec says to end the session.
                if (code == OPT_EXPORT_NAME) throw new ProtocolViolation("EXPORT_NAME before STARTTLS, and TLS is required");
                replyError(code, REP_ERR_TLS_REQD, "TLS is required: send STARTTLS first");
                continue;
            }
            Session session = handle(code);
            if (session != null) return session;
            if (code == OPT_ABORT || exportNameRefused) return null;
        }
    }

    private Session handle(int code) throws IOException {
        switch (code) {
            case OPT_EXPORT_NAME: {
                if (extendedHeaders) throw new ProtocolViolation("EXPORT_NAME after EXTENDED_HEADERS, which rules it out");
                String name = string(option.remaining());
                ExportEntry entry;
                try {
                    entry = found(exports.find(name));
                } catch (IOException e) {
                    throw new ProtocolViolation("EXPORT_NAME asked for export '" + name + "', which cannot be opened: "
                            + e.getMessage());
                }
                if (entry == null) throw new ProtocolViolation("EXPORT_NAME asked for unknown export '" + name + "'");
                Session session = session(entry);
                if (admission.refusal() != null) {
                    exportNameRefused = true;
                    return null;
                }
                ByteBuffer reply = ByteBuffer.allocate(noZeroes ? 10 : 134);
                reply.putLong(session.size()).putShort((short) session.transmissionFlags()).position(reply.capacity()).flip();
                SocketIo.writeFully(channel, reply);
                return session;
            }
            case OPT_ABORT:
                try {
                    reply(code, REP_ACK, null);
                } catch (IOException e) {
                    // The spec lets a client close without waiting for this ACK.
                }
                return null;
            case OPT_STARTTLS:
                if (tlsSettings.mode() == TlsMode.OFF) break;
                startTls();
                return null;
            case OPT_LIST:
                if (option.hasRemaining()) return invalid(code, "LIST takes no data");
                List<ExportSource.Listing> listings;
                try {
                    listings = exports.list();
                } catch (IOException e) {
                    log.log(System.Logger.Level.WARNING, who + ": cannot list the exports: " + e.getMessage());
                    replyError(code, REP_ERR_UNKNOWN, "cannot list the exports: " + reason(e));
                    return null;
                }
                for (ExportSource.Listing entry : listings) {
                    // The name, then the description as the rest of the data, as nbdkit and libnbd read it.
                    byte[] name = utf8(entry.name());
                    byte[] description = utf8(entry.description());
                    reply(code, REP_SERVER, ByteBuffer.allocate(4 + name.length + description.length).putInt(name.length)
                            .put(name).put(description).flip());
                }
                reply(code, REP_ACK, null);
                return null;
            case OPT_STRUCTURED_REPLY:
                if (option.hasRemaining()) return invalid(code, "STRUCTURED_REPLY takes no data");
                if (extendedHeaders) {
                    replyError(code, REP_ERR_EXT_HEADER_REQD, "extended headers are negotiated already and take precedence");
                    return null;
                }
                structuredReplies = true;
                reply(code, REP_ACK, null);
                return null;
            case OPT_EXTENDED_HEADERS:
                if (option.hasRemaining()) return invalid(code, "EXTENDED_HEADERS takes no data");
                extendedHeaders = true;
                reply(code, REP_ACK, null);
                return null;
            case OPT_INFO:
            case OPT_GO:
                return info(code);
            case OPT_LIST_META_CONTEXT:
            case OPT_SET_META_CONTEXT:
                metaContext(code);
                return null;
            default:
                break;
        }
        replyError(code, REP_ERR_UNSUP, "option " + optionName(code) + " is not supported");
        return null;
    }

    /** ACKs STARTTLS and runs the TLS handshake; what was negotiated in clear is forgotten. */
    private void startTls() throws IOException {
        if (tls != null) {
            invalid(OPT_STARTTLS, "TLS is already active");
            return;
        }
        if (option.hasRemaining()) {
            invalid(OPT_STARTTLS, "STARTTLS takes no data");
            return;
        }
        reply(OPT_STARTTLS, REP_ACK, null);
        try {
            tls = TlsChannel.handshake(socket, tlsSettings.serverEngine());
        } catch (SSLException e) {
            throw new ProtocolViolation("TLS handshake failed: " + e.getMessage(), e);
        }
        channel = tls;
        refusedAfterTls = admission.tlsRefusal(tls.session());
        structuredReplies = false;
        extendedHeaders = false;
        contextsFor = null;
        selectedContexts = List.of();
    }

    /**
     * Answers an option of a client that TLS showed may not come in with POLICY and why, so that the client can say
     * it (a bare close reads as a network fault); the connection ends at the option that would have chosen an export.
     */
    private void refuseAfterTls(int code) throws IOException {
        if (code != OPT_EXPORT_NAME && code != OPT_ABORT && ++optionsRefusedAfterTls <= MAX_REFUSED_AFTER_TLS) {
            replyError(code, REP_ERR_POLICY, "this client may not connect: " + refusedAfterTls);
            if (code != OPT_GO && code != OPT_INFO && code != OPT_LIST) return;
        }
        throw new AccessRefused("refused after TLS: " + refusedAfterTls);
    }

    private Session info(int code) throws IOException {
        if (option.remaining() < 6) return invalid(code, "option data too short");
        long nameLength = Integer.toUnsignedLong(option.getInt());
        if (nameLength > option.remaining() - 2) return invalid(code, "export name length past the option data");
        String name = string((int) nameLength);
        int requests = option.getShort() & 0xffff;
        if (option.remaining() != 2 * requests) return invalid(code, "information request count does not match the data");
        boolean wantName = false;
        boolean wantDescription = false;
        for (int i = 0; i < requests; i++) {
            int info = option.getShort() & 0xffff;
            wantName |= info == INFO_NAME;
            wantDescription |= info == INFO_DESCRIPTION;
        }
        ExportEntry entry = export(code, name);
        if (entry == null) return null;
        Session session = session(entry);
        if (code == OPT_GO) {
            String refusal = admission.refusal();
            // POLICY, not SHUTDOWN: the server is not going away, and the client may try GO again later.
            if (refusal != null) {
                replyError(code, REP_ERR_POLICY, refusal);
                return null;
            }
        }
        reply(code, REP_INFO, ByteBuffer.allocate(12).putShort((short) INFO_EXPORT).putLong(session.size())
                .putShort((short) session.transmissionFlags()).flip());
        if (wantName) {
            byte[] canonical = utf8(entry.name());
            reply(code, REP_INFO, ByteBuffer.allocate(2 + canonical.length).putShort((short) INFO_NAME).put(canonical).flip());
        }
        if (wantDescription && !entry.description().isEmpty()) {
            byte[] text = utf8(entry.description());
            reply(code, REP_INFO, ByteBuffer.allocate(2 + text.length).putShort((short) INFO_DESCRIPTION).put(text).flip());
        }
        // Sent even when not asked: harmless to clients that ignore it, and an O_DIRECT export's minimum matters.
        BlockDevice export = entry.device();
        int minimum = export.minimumBlockSize();
        int preferred = Math.max(export.preferredBlockSize(), minimum);
        int longest = Math.min(maxPayload, Math.max(export.maximumBlockSize(), minimum));
        int maximum = longest - longest % minimum;
        reply(code, REP_INFO, ByteBuffer.allocate(14).putShort((short) INFO_BLOCK_SIZE).putInt(minimum)
                .putInt(preferred).putInt(maximum).flip());
        reply(code, REP_ACK, null);
        return code == OPT_GO ? session : null;
    }

    /**
     * LIST_META_CONTEXT or SET_META_CONTEXT. The contexts are those {@link MetaContext#offeredBy} the export's
     * device: LIST with no query answers all of them, and a query ending in a colon ({@code base:}, {@code qemu:},
     * {@code qemu:dirty-bitmap:}) those of its namespace; SET takes only full names, and replaces the selection,
     * even when it fails. Unknown names are left out of the answer, as the spec asks.
     */
    private void metaContext(int code) throws IOException {
        boolean set = code == OPT_SET_META_CONTEXT;
        if (set) {
            contextsFor = null;
            selectedContexts = List.of();
        }
        if (set && !structuredReplies && !extendedHeaders) {
            invalid(code, "SET_META_CONTEXT needs structured replies or extended headers first");
            return;
        }
        if (option.remaining() < 8) {
            invalid(code, "option data too short");
            return;
        }
        long nameLength = Integer.toUnsignedLong(option.getInt());
        if (nameLength > option.remaining() - 4) {
            invalid(code, "export name length past the option data");
            return;
        }
        String name = string((int) nameLength);
        long queryCount = Integer.toUnsignedLong(option.getInt());
        List<String> queries = new ArrayList<>();
        for (long i = 0; i < queryCount; i++) {
            if (option.remaining() < 4) {
                invalid(code, "query " + i + " is past the option data");
                return;
            }
            long queryLength = Integer.toUnsignedLong(option.getInt());
            if (queryLength > option.remaining()) {
                invalid(code, "query " + i + " length past the option data");
                return;
            }
            queries.add(string((int) queryLength));
        }
        if (option.hasRemaining()) {
            invalid(code, "trailing bytes after the queries");
            return;
        }
        ExportEntry entry = export(code, name);
        if (entry == null) return;
        List<MetaContext> answered = new ArrayList<>();
        for (MetaContext context : MetaContext.offeredBy(entry.device(), exports.allocationDepth())) {
            boolean asked = queries.isEmpty() && !set;
            for (String query : queries) asked |= context.answers(query, !set);
            if (asked) answered.add(context);
        }
        if (set && answered.size() > MetaContext.MAX_SELECTED) {
            invalid(code, "SET_META_CONTEXT selects " + answered.size() + " meta contexts; at most "
                    + MetaContext.MAX_SELECTED + " may be selected");
            return;
        }
        for (MetaContext context : answered) {
            byte[] text = utf8(context.name());
            reply(code, REP_META_CONTEXT, ByteBuffer.allocate(4 + text.length).putInt(set ? context.id() : 0)
                    .put(text).flip());
        }
        if (set && !answered.isEmpty()) {
            contextsFor = entry.name(); // the default export's own name when "" was asked for
            selectedContexts = List.copyOf(answered);
        }
        reply(code, REP_ACK, null);
    }

    /** The export a client named, or null after telling it there is none or that it cannot be opened. */
    private ExportEntry export(int code, String name) throws IOException {
        ExportEntry entry;
        try {
            entry = found(exports.find(name));
        } catch (IOException e) {
            log.log(System.Logger.Level.WARNING, who + ": export '" + name + "' cannot be opened: " + e.getMessage());
            replyError(code, REP_ERR_UNKNOWN, "export '" + name + "' cannot be opened: " + reason(e));
            return null;
        }
        if (entry == null) replyError(code, REP_ERR_UNKNOWN, "no export named '" + name + "'");
        return entry;
    }

    private Session session(ExportEntry entry) throws IOException {
        BlockDevice export = entry.device();
        boolean chunks = structuredReplies || extendedHeaders;
        List<MetaContext> contexts = chunks && entry.name().equals(contextsFor) ? selectedContexts : List.of();
        return new Session(entry, export.size(), transmissionFlags(export, chunks), chunks, contexts, extendedHeaders);
    }

    /** The transmission flags an export earns from its capabilities. */
    public static int transmissionFlags(BlockDevice export, boolean structuredReplies) {
        Capabilities can = export.capabilities();
        int flags = TF_HAS_FLAGS;
        if (!can.has(Capability.WRITE)) {
            flags |= TF_READ_ONLY;
        } else {
            if (can.has(Capability.FUA)) flags |= TF_SEND_FUA;
            if (can.has(Capability.TRIM)) flags |= TF_SEND_TRIM;
            if (can.has(Capability.ZERO)) flags |= TF_SEND_WRITE_ZEROES;
            if (can.has(Capability.ZERO) && can.has(Capability.FAST_ZERO)) flags |= TF_SEND_FAST_ZERO;
        }
        if (can.has(Capability.FLUSH)) flags |= TF_SEND_FLUSH;
        if (structuredReplies) flags |= TF_SEND_DF;
        if (can.has(Capability.MULTI_CONN)) flags |= TF_CAN_MULTI_CONN;
        if (can.has(Capability.CACHE)) flags |= TF_SEND_CACHE;
        return flags;
    }

    /**
     * A failure as a client may be told it: the errno's text and name, never the message naming the server's files.
     * The errno is the first one the failure or its causes tell (an opener may wrap the failed call), else EIO's.
     */
    private static String reason(IOException e) {
        int errno = io.pagewise.device.DeviceException.EIO;
        for (Throwable t = e; t != null && errno == io.pagewise.device.DeviceException.EIO; t = t.getCause()) {
            errno = io.pagewise.device.DeviceException.errnoOf(t);
        }
        return io.pagewise.internal.Errno.description(errno) + " (" + io.pagewise.internal.Errno.name(errno) + ")";
    }

    private Session invalid(int code, String message) throws IOException {
        replyError(code, REP_ERR_INVALID, message);
        return null;
    }

    private void replyError(int code, int type, String message) throws IOException {
        // Messages echo what the client sent; libnbd drops a connection whose error string is over the limit.
        reply(code, type, ByteBuffer.wrap(utf8Within(message, MAX_STRING)));
    }

    private void reply(int code, int type, ByteBuffer data) throws IOException {
        int length = data == null ? 0 : data.remaining();
        // One write for header and data: one TLS record, one TCP segment.
        ByteBuffer reply = ByteBuffer.allocate(20 + length).putLong(OPTION_REPLY_MAGIC).putInt(code).putInt(type).putInt(length);
        if (data != null) reply.put(data);
        SocketIo.writeFully(channel, reply.flip());
    }

    /** Reads a string of the option data; its length was checked against the data, which is at most 64 KiB. */
    private String string(int length) {
        byte[] bytes = new byte[length];
        option.get(bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    private static byte[] utf8(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}

package io.pagewise.nbd.server.protocol;

import static io.pagewise.nbd.wire.Protocol.*;

import io.pagewise.device.BlockDevice;
import io.pagewise.device.Capabilities;
import io.pagewise.device.Capability;
import io.pagewise.nbd.TlsMode;
import io.pagewise.nbd.server.ExportEntry;
import io.pagewise.nbd.server.exports.Exports;
import io.pagewise.nbd.tls.TlsChannel;
import io.pagewise.nbd.tls.TlsSettings;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ByteChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;

/**
 * The fixed-newstyle handshake on one connection, up to the moment it enters transmission (GO or EXPORT_NAME) or
 * ends (ABORT, end of stream, protocol violation). STARTTLS upgrades the connection to TLS, after which the
 * haggling starts over; in {@link TlsMode#REQUIRE} nothing else is answered before it.
 */
public final class Handshake {
    private final OptionChannel options;
    private final TlsUpgrade tlsUpgrade;
    private final ExportReplies exportReplies;
    private final Exports exports;
    private final BooleanSupplier stopping;
    private final Admission admission;
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
        this.options = new OptionChannel(channel);
        this.tlsUpgrade = new TlsUpgrade(channel, tlsSettings, admission);
        this.exportReplies = new ExportReplies(exports, options, maxPayload, log, who);
        this.exports = exports;
        this.stopping = stopping;
        this.admission = admission;
    }

    /** {@return each export entry handed to this client, once per time}: to release when the connection ends */
    public java.util.List<ExportEntry> found() {
        return exportReplies.found();
    }

    /** {@return the TLS channel the connection goes on over, or null when the client did not ask for TLS} */
    public TlsChannel tls() {
        return tlsUpgrade.tls();
    }

    /** Runs the handshake; the session to serve, or null when the client left without choosing an export. */
    public Session negotiate() throws IOException {
        ByteBuffer greeting = ByteBuffer.allocate(18);
        greeting.putLong(NBDMAGIC).putLong(IHAVEOPT).putShort((short) (FLAG_FIXED_NEWSTYLE | FLAG_NO_ZEROES)).flip();
        options.write(greeting);

        ByteBuffer clientFlags = ByteBuffer.allocate(4);
        if (!options.read(clientFlags)) return null;
        int flags = clientFlags.flip().getInt();
        if ((flags & ~KNOWN_CLIENT_FLAGS) != 0) {
            throw new ProtocolViolation("unknown client flags 0x" + Integer.toHexString(flags));
        }
        noZeroes = (flags & CLIENT_NO_ZEROES) != 0;

        while (true) {
            if (!options.next()) return null;
            int code = options.code();
            if (tlsUpgrade.refused()) {
                tlsUpgrade.refuse(code, options);
                continue;
            }
            if (stopping.getAsBoolean() && code != OPT_ABORT) {
                options.replyError(code, REP_ERR_SHUTDOWN, "server is shutting down");
                continue;
            }
            if (tlsUpgrade.stillRequired() && code != OPT_STARTTLS && code != OPT_ABORT) {
                // EXPORT_NAME has no error reply: the spec says to end the session.
                if (code == OPT_EXPORT_NAME) throw new ProtocolViolation("EXPORT_NAME before STARTTLS, and TLS is required");
                options.replyError(code, REP_ERR_TLS_REQD, "TLS is required: send STARTTLS first");
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
                Session session = session(exportReplies.forExportName(options.string(options.data().remaining())));
                if (admission.refusal() != null) {
                    exportNameRefused = true;
                    return null;
                }
                ByteBuffer reply = ByteBuffer.allocate(noZeroes ? 10 : 134);
                reply.putLong(session.size()).putShort((short) session.transmissionFlags()).position(reply.capacity()).flip();
                options.write(reply);
                return session;
            }
            case OPT_ABORT:
                try {
                    options.reply(code, REP_ACK, null);
                } catch (IOException e) {
                    // The spec lets a client close without waiting for this ACK.
                }
                return null;
            case OPT_STARTTLS:
                if (!tlsUpgrade.offered()) break;
                startTls();
                return null;
            case OPT_LIST:
                if (options.data().hasRemaining()) return options.invalid(code, "LIST takes no data");
                exportReplies.list(code);
                return null;
            case OPT_STRUCTURED_REPLY:
                if (options.data().hasRemaining()) return options.invalid(code, "STRUCTURED_REPLY takes no data");
                if (extendedHeaders) {
                    options.replyError(code, REP_ERR_EXT_HEADER_REQD, "extended headers are negotiated already and take precedence");
                    return null;
                }
                structuredReplies = true;
                options.reply(code, REP_ACK, null);
                return null;
            case OPT_EXTENDED_HEADERS:
                if (options.data().hasRemaining()) return options.invalid(code, "EXTENDED_HEADERS takes no data");
                extendedHeaders = true;
                options.reply(code, REP_ACK, null);
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
        options.replyError(code, REP_ERR_UNSUP, "option " + optionName(code) + " is not supported");
        return null;
    }

    /** STARTTLS: once the connection is TLS, what was negotiated in clear is forgotten. */
    private void startTls() throws IOException {
        if (!tlsUpgrade.start(options)) return;
        structuredReplies = false;
        extendedHeaders = false;
        contextsFor = null;
        selectedContexts = List.of();
    }

    private Session info(int code) throws IOException {
        ByteBuffer option = options.data();
        if (option.remaining() < 6) return options.invalid(code, "option data too short");
        long nameLength = Integer.toUnsignedLong(option.getInt());
        if (nameLength > option.remaining() - 2) {
            return options.invalid(code, "export name length past the option data");
        }
        String name = options.string((int) nameLength);
        int requests = option.getShort() & 0xffff;
        if (option.remaining() != 2 * requests) {
            return options.invalid(code, "information request count does not match the data");
        }
        boolean wantName = false;
        boolean wantDescription = false;
        for (int i = 0; i < requests; i++) {
            int info = option.getShort() & 0xffff;
            wantName |= info == INFO_NAME;
            wantDescription |= info == INFO_DESCRIPTION;
        }
        ExportEntry entry = exportReplies.find(code, name);
        if (entry == null) return null;
        Session session = session(entry);
        if (code == OPT_GO) {
            String refusal = admission.refusal();
            // POLICY, not SHUTDOWN: the server is not going away, and the client may try GO again later.
            if (refusal != null) {
                options.replyError(code, REP_ERR_POLICY, refusal);
                return null;
            }
        }
        exportReplies.info(code, session, wantName, wantDescription);
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
        ByteBuffer option = options.data();
        if (set) {
            contextsFor = null;
            selectedContexts = List.of();
        }
        if (set && !structuredReplies && !extendedHeaders) {
            options.invalid(code, "SET_META_CONTEXT needs structured replies or extended headers first");
            return;
        }
        if (option.remaining() < 8) {
            options.invalid(code, "option data too short");
            return;
        }
        long nameLength = Integer.toUnsignedLong(option.getInt());
        if (nameLength > option.remaining() - 4) {
            options.invalid(code, "export name length past the option data");
            return;
        }
        String name = options.string((int) nameLength);
        long queryCount = Integer.toUnsignedLong(option.getInt());
        List<String> queries = new ArrayList<>();
        for (long i = 0; i < queryCount; i++) {
            if (option.remaining() < 4) {
                options.invalid(code, "query " + i + " is past the option data");
                return;
            }
            long queryLength = Integer.toUnsignedLong(option.getInt());
            if (queryLength > option.remaining()) {
                options.invalid(code, "query " + i + " length past the option data");
                return;
            }
            queries.add(options.string((int) queryLength));
        }
        if (option.hasRemaining()) {
            options.invalid(code, "trailing bytes after the queries");
            return;
        }
        ExportEntry entry = exportReplies.find(code, name);
        if (entry == null) return;
        List<MetaContext> answered = new ArrayList<>();
        for (MetaContext context : MetaContext.offeredBy(entry.device(), exports.allocationDepth())) {
            boolean asked = queries.isEmpty() && !set;
            for (String query : queries) asked |= context.answers(query, !set);
            if (asked) answered.add(context);
        }
        if (set && answered.size() > MetaContext.MAX_SELECTED) {
            options.invalid(code, "SET_META_CONTEXT selects " + answered.size() + " meta contexts; at most "
                    + MetaContext.MAX_SELECTED + " may be selected");
            return;
        }
        for (MetaContext context : answered) {
            byte[] text = OptionChannel.utf8(context.name());
            options.reply(code, REP_META_CONTEXT, ByteBuffer.allocate(4 + text.length).putInt(set ? context.id() : 0)
                    .put(text).flip());
        }
        if (set && !answered.isEmpty()) {
            contextsFor = entry.name(); // the default export's own name when "" was asked for
            selectedContexts = List.copyOf(answered);
        }
        options.reply(code, REP_ACK, null);
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
}

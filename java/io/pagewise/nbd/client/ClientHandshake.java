package io.pagewise.nbd.client;

import static io.pagewise.nbd.wire.Protocol.*;

import io.pagewise.nbd.client.ExportInfo;
import io.pagewise.nbd.wire.SocketIo;
import io.pagewise.nbd.tls.TlsChannel;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ByteChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLException;

/**
 * The client side of the fixed-newstyle handshake: extended headers (structured replies when the server does not
 * know them), {@code base:allocation}, then GO with a block-size request (EXPORT_NAME when the server does not know
 * GO, which extended headers rule out). With a TLS engine, STARTTLS comes first, and the connection fails when the
 * server will not start TLS. A handshake that fails after the greeting ends with ABORT, so that the server sees a
 * client that left rather than one that vanished.
 */
final class ClientHandshake {
    private static final long OLDSTYLE_MAGIC = 0x00420281861253L;
    private static final int DEFAULT_MAXIMUM_PAYLOAD = MIN_MAX_PAYLOAD;
    private static final Pattern RECEIVED_ALERT = Pattern.compile("Received fatal alert: (\\w+)");
    private static final List<String> CERTIFICATE_ALERTS = List.of("certificate_required", "bad_certificate",
            "unknown_ca", "certificate_unknown", "certificate_expired", "certificate_revoked", "unsupported_certificate",
            "access_denied");

    private final ByteChannel socket;
    private final SSLEngine tlsEngine;
    /** The socket, or the TLS channel over it after STARTTLS. */
    private ByteChannel channel;
    private TlsChannel tls;
    /** Set while the TLS handshake runs: a failure then leaves nothing to say ABORT over. */
    private boolean tlsHandshaking;
    private final String server;
    private final String exportName;
    private final byte[] exportNameBytes;
    /** Meta contexts to select besides base:allocation, and what SET_META_CONTEXT selected, by name, with ids. */
    private final List<String> extraContexts;
    private final Map<String, Integer> selected = new LinkedHashMap<>();

    /** One option reply: its type and data. */
    private record Reply(int type, ByteBuffer data) {}

    /** A handshake without TLS, on any channel (tests and fuzzing drive it in memory). */
    public ClientHandshake(ByteChannel channel, String server, String exportName) {
        this(channel, null, server, exportName);
    }

    /** A handshake on socket, over TLS with tlsEngine (a client-mode engine) unless it is null. */
    public ClientHandshake(ByteChannel socket, SSLEngine tlsEngine, String server, String exportName) {
        this(socket, tlsEngine, server, exportName, List.of());
    }

    /** A handshake that also selects extraContexts (full meta context names) with base:allocation. */
    public ClientHandshake(ByteChannel socket, SSLEngine tlsEngine, String server, String exportName,
                           List<String> extraContexts) {
        this.extraContexts = List.copyOf(extraContexts);
        this.socket = socket;
        this.tlsEngine = tlsEngine;
        this.channel = socket;
        this.server = server;
        this.exportName = exportName;
        this.exportNameBytes = exportName.getBytes(StandardCharsets.UTF_8);
    }

    /** {@return the meta contexts SET_META_CONTEXT selected, by name, with their ids}; empty before negotiate */
    public Map<String, Integer> metaContexts() {
        return selected;
    }

    /** {@return the TLS channel the connection goes on over, or null without TLS} */
    public TlsChannel tls() {
        return tls;
    }

    public ExportInfo negotiate() throws IOException {
        ByteBuffer greeting = read(18);
        long second = greeting.getLong(8);
        boolean fixed = second == IHAVEOPT && (greeting.getShort(16) & FLAG_FIXED_NEWSTYLE) != 0;
        try {
            return negotiate(greeting);
        } catch (IOException | RuntimeException e) {
            // After a failed TLS handshake the spec wants a hard disconnect: nothing can be said in the clear.
            if (fixed && !tlsHandshaking) abortQuietly();
            throw e;
        }
    }

    /** Says goodbye with ABORT, without waiting for its ACK (the spec allows that); a broken connection says nothing. */
    private void abortQuietly() {
        try {
            sendOption(OPT_ABORT, ByteBuffer.allocate(0));
        } catch (IOException | RuntimeException e) {
            // the server hung up already: nothing to tell it
        }
    }

    private ExportInfo negotiate(ByteBuffer greeting) throws IOException {
        if (greeting.getLong() != NBDMAGIC) throw failure("is not an NBD server (bad greeting magic)");
        long second = greeting.getLong();
        if (second == OLDSTYLE_MAGIC) throw failure("speaks the oldstyle protocol, which is not supported");
        if (second != IHAVEOPT) throw failure("sent an unknown handshake magic 0x" + Long.toHexString(second));
        int serverFlags = greeting.getShort() & 0xffff;
        boolean fixed = (serverFlags & FLAG_FIXED_NEWSTYLE) != 0;
        boolean noZeroes = (serverFlags & FLAG_NO_ZEROES) != 0;
        int clientFlags = (fixed ? CLIENT_FIXED_NEWSTYLE : 0) | (noZeroes ? CLIENT_NO_ZEROES : 0);
        SocketIo.writeFully(channel, ByteBuffer.allocate(4).putInt(clientFlags).flip());
        if (tlsEngine != null) {
            if (!fixed) throw failure("does not speak fixed newstyle, so TLS cannot be started");
            startTls();
        }
        if (!fixed) return exportName(noZeroes, false, -1);

        boolean extended;
        try {
            extended = simpleOption(OPT_EXTENDED_HEADERS, ByteBuffer.allocate(0));
        } catch (IOException e) {
            throw tls == null ? e : firstAnswerAfterTlsFailed(e);
        }
        boolean structured = extended || simpleOption(OPT_STRUCTURED_REPLY, ByteBuffer.allocate(0));
        long allocation = structured ? selectAllocationContext() : -1;

        ByteBuffer go = ByteBuffer.allocate(4 + exportNameBytes.length + 2 + 2);
        go.putInt(exportNameBytes.length).put(exportNameBytes).putShort((short) 1).putShort((short) INFO_BLOCK_SIZE).flip();
        sendOption(OPT_GO, go);
        long size = -1;
        int flags = 0;
        int minimum = 1;
        int preferred = 4096;
        int maximum = DEFAULT_MAXIMUM_PAYLOAD;
        while (true) {
            Reply reply = readReply(OPT_GO);
            if (reply.type == REP_ACK) break;
            if (reply.type == REP_ERR_UNSUP && !extended) return exportName(noZeroes, structured, allocation);
            if (reply.type < 0) throw refused("GO", reply);
            if (reply.type != REP_INFO || reply.data.remaining() < 2) continue;
            int info = reply.data.getShort() & 0xffff;
            if (info == INFO_EXPORT && reply.data.remaining() >= 10) {
                size = checkedSize(reply.data.getLong());
                flags = reply.data.getShort() & 0xffff;
            } else if (info == INFO_BLOCK_SIZE && reply.data.remaining() >= 12) {
                minimum = reply.data.getInt();
                preferred = reply.data.getInt();
                maximum = reply.data.getInt();
            }
        }
        if (size < 0) throw failure("accepted GO for export '" + exportName + "' without sending its size");
        return info(size, flags, minimum, preferred, maximum, structured, allocation, extended);
    }

    private ExportInfo info(long size, int flags, int minimum, int preferred, int maximum, boolean structured,
                            long allocation, boolean extended) {
        minimum = Math.max(1, minimum);
        preferred = Math.max(minimum, preferred);
        // The spec lets a server advertise a maximum above 2^31; a Java buffer cannot hold that.
        maximum = maximum <= 0 ? Integer.MAX_VALUE - 4096 : Math.max(minimum, maximum);
        return new ExportInfo(size, flags, minimum, preferred, maximum, structured, allocation, extended);
    }

    private void startTls() throws IOException {
        sendOption(OPT_STARTTLS, ByteBuffer.allocate(0));
        Reply reply = readReply(OPT_STARTTLS);
        if (reply.type != REP_ACK) {
            if (reply.type >= 0) throw failure("answered STARTTLS with reply type " + reply.type);
            throw failure("will not start TLS: " + describe(reply) + " (connect with nbd:// or nbd+unix:// for no TLS)");
        }
        tlsHandshaking = true;
        TlsChannel handshaking = TlsChannel.beforeHandshake(socket, tlsEngine);
        try {
            handshaking.runHandshake();
            tls = handshaking;
            tlsHandshaking = false;
        } catch (SSLException e) {
            IOException refused = clientCertificateRefused(e, handshaking);
            if (refused != null) throw refused;
            String text = String.valueOf(e.getMessage());
            throw new SSLException("NBD server " + server + ": TLS handshake failed: " + (text.contains("PKIX path building")
                    ? "its certificate is not signed by a CA this client trusts (ca-cert.pem of tls-certificates): " : "")
                    + text, e);
        }
        channel = tls;
    }

    /**
     * Under TLS 1.3 the server checks our certificate after the handshake has ended for us: its alert, or its closing
     * the connection (qemu-nbd's --tls-authz), comes at the first answer it owes us.
     */
    private IOException firstAnswerAfterTlsFailed(IOException e) {
        IOException refused = clientCertificateRefused(e, tls);
        if (refused != null) return refused;
        // Not the server's answer found wrong (failure(...)) nor TLS failing: the connection itself ended.
        if (e instanceof SSLException || String.valueOf(e.getMessage()).startsWith("NBD server ")) return e;
        return new IOException("NBD server " + server + " closed the connection right after the TLS handshake, before"
                + " answering any option: it may not admit this client's certificate (see the server's log): "
                + e.getMessage(), e);
    }

    /** {@return an error saying the server refused our client certificate or wants one, when e is such a TLS alert}, else null */
    private IOException clientCertificateRefused(IOException e, TlsChannel channel) {
        String refusal = certificateRefusal(String.valueOf(e.getMessage()), channel.sentCertificate(),
                channel.tookPeerCertificate());
        return refusal == null ? null : new SSLException("NBD server " + server + " " + refusal, e);
    }

    /**
     * What the server's TLS alert in failure says of our certificate, from whether we sent one: the alert alone does
     * not tell. For a missing client certificate JDK servers send certificate_required under TLS 1.3 (17.0.15 still
     * sent bad_certificate) and handshake_failure under TLS 1.2. Null when failure is not such an alert: our own
     * check of the server failed, or the two never got as far as the certificates (no common version or cipher).
     */
    static String certificateRefusal(String failure, boolean sentCertificate, boolean tookServerCertificate) {
        Matcher received = RECEIVED_ALERT.matcher(failure);
        if (!received.find() || !tookServerCertificate) return null;
        String alert = received.group(1);
        if (!sentCertificate && (CERTIFICATE_ALERTS.contains(alert) || alert.equals("handshake_failure"))) {
            return "requires a TLS client certificate, and this client has none to send (client-cert.pem and"
                    + " client-key.pem of tls-certificates)";
        }
        if (sentCertificate && CERTIFICATE_ALERTS.contains(alert) && !alert.equals("certificate_required")) {
            return "refused this client's TLS certificate (" + alert + "): it does not trust it";
        }
        return null;
    }

    /** The pre-GO way in: no block sizes, and the server hangs up instead of refusing an unknown export. */
    private ExportInfo exportName(boolean noZeroes, boolean structured, long allocation) throws IOException {
        ByteBuffer header = ByteBuffer.allocate(16 + exportNameBytes.length);
        header.putLong(IHAVEOPT).putInt(OPT_EXPORT_NAME).putInt(exportNameBytes.length).put(exportNameBytes).flip();
        SocketIo.writeFully(channel, header);
        ByteBuffer reply;
        try {
            reply = read(noZeroes ? 10 : 134);
        } catch (IOException e) {
            throw failure("closed the connection on EXPORT_NAME '" + exportName + "' (no such export?)");
        }
        long size = checkedSize(reply.getLong());
        int flags = reply.getShort() & 0xffff;
        return info(size, flags, 1, 4096, DEFAULT_MAXIMUM_PAYLOAD, structured, allocation, false);
    }

    /** The wire's size is unsigned; one of 2^63 bytes or more cannot be addressed with Java's long offsets. */
    private long checkedSize(long size) throws IOException {
        if (size < 0) throw failure("sent an export size of " + Long.toUnsignedString(size) + " bytes, over 2^63 - 1");
        return size;
    }

    /** Sends an option whose only success reply is ACK; false when the server does not support it. */
    private boolean simpleOption(int option, ByteBuffer data) throws IOException {
        sendOption(option, data);
        Reply reply = readReply(option);
        if (reply.type == REP_ACK) return true;
        if (reply.type == REP_ERR_TLS_REQD) throw failure("requires TLS (connect with nbds:// or nbds+unix://)");
        if (reply.type < 0) return false;
        throw failure("answered " + optionName(option) + " with reply " + replyName(reply.type));
    }

    /**
     * Selects base:allocation and the extra contexts in one SET_META_CONTEXT; returns the id of base:allocation, or
     * -1. A server that refuses the option selects nothing; one that does not know a context leaves it out.
     */
    private long selectAllocationContext() throws IOException {
        List<byte[]> queries = new ArrayList<>();
        queries.add(BASE_ALLOCATION.getBytes(StandardCharsets.US_ASCII));
        for (String extra : extraContexts) queries.add(extra.getBytes(StandardCharsets.UTF_8));
        int length = 4 + exportNameBytes.length + 4;
        for (byte[] query : queries) length += 4 + query.length;
        ByteBuffer data = ByteBuffer.allocate(length);
        data.putInt(exportNameBytes.length).put(exportNameBytes).putInt(queries.size());
        for (byte[] query : queries) data.putInt(query.length).put(query);
        sendOption(OPT_SET_META_CONTEXT, data.flip());
        while (true) {
            Reply reply = readReply(OPT_SET_META_CONTEXT);
            if (reply.type == REP_ACK) {
                Integer id = selected.get(BASE_ALLOCATION);
                return id == null ? -1 : Integer.toUnsignedLong(id);
            }
            if (reply.type < 0) {
                selected.clear();
                return -1;
            }
            if (reply.type == REP_META_CONTEXT && reply.data.remaining() >= 4) {
                int candidate = reply.data.getInt();
                String name = StandardCharsets.UTF_8.decode(reply.data).toString();
                if (name.equals(BASE_ALLOCATION) || extraContexts.contains(name)) selected.put(name, candidate);
            }
        }
    }

    private void sendOption(int option, ByteBuffer data) throws IOException {
        // One write for header and data: one TLS record, one TCP segment.
        ByteBuffer request = ByteBuffer.allocate(16 + data.remaining()).putLong(IHAVEOPT).putInt(option).putInt(data.remaining());
        SocketIo.writeFully(channel, request.put(data).flip());
    }

    private Reply readReply(int option) throws IOException {
        ByteBuffer header = read(20);
        long magic = header.getLong();
        int answered = header.getInt();
        int type = header.getInt();
        int length = header.getInt();
        if (magic != OPTION_REPLY_MAGIC) throw failure("sent a bad option reply magic 0x" + Long.toHexString(magic));
        if (answered != option) {
            throw failure("answered option " + optionName(answered) + " while " + optionName(option) + " was asked");
        }
        if (length < 0 || length > MAX_OPTION_LENGTH) {
            throw failure("sent an option reply of " + Integer.toUnsignedString(length) + " bytes");
        }
        return new Reply(type, read(length));
    }

    private IOException refused(String option, Reply reply) {
        return failure("refused " + option + " for export '" + exportName + "': " + describe(reply));
    }

    private static String describe(Reply reply) {
        String message = StandardCharsets.UTF_8.decode(reply.data).toString();
        String kind;
        switch (reply.type) {
            case REP_ERR_UNKNOWN: kind = "no such export"; break;
            case REP_ERR_UNSUP: kind = "not supported"; break;
            case REP_ERR_POLICY: kind = "refused by policy"; break;
            case REP_ERR_INVALID: kind = "invalid request"; break;
            case REP_ERR_SHUTDOWN: kind = "server is shutting down"; break;
            case REP_ERR_TLS_REQD: kind = "TLS is required"; break;
            case REP_ERR_TOO_BIG: kind = "too big"; break;
            case REP_ERR_BLOCK_SIZE_REQD: kind = "block sizes must be asked for"; break;
            case REP_ERR_EXT_HEADER_REQD: kind = "extended headers are required"; break;
            case REP_ERR_PLATFORM: kind = "not supported on the server's platform"; break;
            default: kind = replyName(reply.type);
        }
        return kind + (message.isEmpty() ? "" : " (" + message + ")");
    }

    private ByteBuffer read(int length) throws IOException {
        ByteBuffer buffer = ByteBuffer.allocate(length);
        SocketIo.readExactly(channel, buffer);
        return buffer.flip();
    }

    private IOException failure(String what) {
        return new IOException("NBD server " + server + " " + what);
    }
}

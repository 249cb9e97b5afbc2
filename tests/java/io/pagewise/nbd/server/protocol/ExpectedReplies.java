package io.pagewise.nbd.server.protocol;

import static io.pagewise.nbd.wire.Protocol.*;

import io.pagewise.backends.MemoryDevice;
import io.pagewise.nbd.NbdException;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ReadableByteChannel;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The client's side of {@link TransmissionFuzzTest}: which requests the fuzz input sends, what the server must answer
 * to each (from the NBD spec and the flags the handshake gave), and a reader that checks every reply byte against
 * that. The harness serves with one thread, so the server reads, executes and answers one request at a time and the
 * replies come in request order.
 *
 * <p>It checks each reply's magic (simple, structured or extended, as negotiated; an extended chunk must repeat the
 * request's offset), cookie, error, chunk flags and types, chunk
 * and payload lengths, that a READ's chunks cover its range exactly once, the data a READ returns (against a model
 * of the {@code MemoryDevice}: what it held when the input began, with every accepted WRITE, WRITE_ZEROES and TRIM
 * applied in order — a MemoryDevice trims by zeroing), BLOCK_STATUS descriptors (BLOCK_STATUS_EXT ones with extended
 * headers), and that nothing follows the last reply.
 */
final class ExpectedReplies {
    /** One request the server reads off the input, and the NBD error it must answer (0 for success). */
    record Sent(int type, int flags, long cookie, long offset, long length, int error, int index, int payloadAt) {
        @Override
        public String toString() {
            return String.format(Locale.ROOT, "request #%d %s flags=0x%x cookie=0x%x %s+%s (expecting %s)", index,
                    commandName(type), flags, cookie, Long.toUnsignedString(offset), Long.toUnsignedString(length),
                    error == 0 ? "success" : "error " + error);
        }
    }

    private final List<Sent> sent = new ArrayList<>();
    private final ByteBuffer input;
    /** The export's bytes as the client knows them: brought up to date request by request as the replies come. */
    private final byte[] model;
    private final boolean structured;
    private final boolean extended;

    /**
     * Parses requests the way the server reads them: a 28-byte header (32 bytes with extended headers, whose length
     * is 64 bits), and its payload (also read, then dropped, when the request is refused): a WRITE's, or with
     * extended headers any command's that has PAYLOAD_LEN. Reading stops at end of input (a cut header or payload is
     * never answered), at a bad magic (a protocol violation), at a PAYLOAD_LEN over the maximum payload (one too) and
     * at DISC.
     *
     * @param contents the export's bytes before the input is served (changed by {@link #check}, as the requests do)
     */
    ExpectedReplies(ByteBuffer requests, int transmissionFlags, boolean structured, boolean allocation, byte[] contents,
                    boolean extended) {
        this.structured = structured || extended;
        this.extended = extended;
        this.model = contents;
        this.input = requests.duplicate();
        ByteBuffer in = requests.duplicate();
        while (in.remaining() >= (extended ? EXTENDED_HEADER_SIZE : REQUEST_HEADER_SIZE)) {
            if (in.getInt() != (extended ? EXTENDED_REQUEST_MAGIC : REQUEST_MAGIC)) break;
            int flags = in.getShort() & 0xffff;
            int type = in.getShort() & 0xffff;
            long cookie = in.getLong();
            long offset = in.getLong();
            long length = extended ? in.getLong() : Integer.toUnsignedLong(in.getInt());
            if (type == CMD_DISC) break;
            int payloadAt = in.position();
            boolean payload = type == CMD_WRITE || (extended && (flags & CMD_FLAG_PAYLOAD_LEN) != 0);
            if (payload && extended && Long.compareUnsigned(length, MAX_PAYLOAD) > 0) break;
            if (payload) {
                if (Long.compareUnsigned(in.remaining(), length) < 0) break;
                in.position(payloadAt + (int) length);
            }
            int error = expectedError(type, flags, offset, length, transmissionFlags, allocation, contents.length,
                    extended);
            sent.add(new Sent(type, flags, cookie, offset, length, error, sent.size(), payloadAt));
        }
    }

    /** Applies what a request that succeeded changed to the model (the server ran it before the next one). */
    private void apply(Sent r) {
        if (r.error() != 0) return;
        int from = (int) r.offset();
        int to = (int) (r.offset() + r.length());
        switch (r.type()) {
            case CMD_WRITE:
                input.get(r.payloadAt(), model, from, to - from);
                break;
            case CMD_WRITE_ZEROES:
            case CMD_TRIM:
                Arrays.fill(model, from, to, (byte) 0);
                break;
            default:
                break;
        }
    }

    /** {@return the requests the server must answer, in order} */
    List<Sent> sent() {
        return sent;
    }

    /** Each command the spec defines, and the transmission flag without which the export does not take it. */
    private static final Map<Integer, Integer> ADVERTISED_BY = Map.of(CMD_READ, 0, CMD_WRITE, 0,
            CMD_FLUSH, TF_SEND_FLUSH, CMD_TRIM, TF_SEND_TRIM, CMD_CACHE, TF_SEND_CACHE,
            CMD_WRITE_ZEROES, TF_SEND_WRITE_ZEROES, CMD_BLOCK_STATUS, 0);

    /**
     * A command flag as the spec states it: the commands it may go with (none listed: any), the transmission flag
     * the export must have advertised for it, and whether it needs extended headers.
     */
    private record FlagRule(int flag, Set<Integer> commands, int advertisedBy, boolean extendedOnly) {
        boolean allows(int type, int tf, boolean extended) {
            return (commands.isEmpty() || commands.contains(type)) && (tf & advertisedBy) == advertisedBy
                    && (extended || !extendedOnly);
        }
    }

    private static final List<FlagRule> FLAG_RULES = List.of(
            new FlagRule(CMD_FLAG_FUA, Set.of(), TF_SEND_FUA, false),
            new FlagRule(CMD_FLAG_NO_HOLE, Set.of(CMD_WRITE_ZEROES), 0, false),
            new FlagRule(CMD_FLAG_DF, Set.of(CMD_READ), TF_SEND_DF, false),
            new FlagRule(CMD_FLAG_REQ_ONE, Set.of(CMD_BLOCK_STATUS), 0, false),
            new FlagRule(CMD_FLAG_FAST_ZERO, Set.of(CMD_WRITE_ZEROES), TF_SEND_FAST_ZERO, false),
            new FlagRule(CMD_FLAG_PAYLOAD_LEN, Set.of(CMD_WRITE), 0, true));

    private static final int ALL_FLAGS = FLAG_RULES.stream().mapToInt(FlagRule::flag).reduce(0, (a, b) -> a | b);

    /**
     * The error a request must get, from the spec and the negotiated flags: an unknown command or flag, a command
     * the export did not advertise, or BLOCK_STATUS without base:allocation is EINVAL; a change to a read-only
     * export EPERM; a READ or WRITE over the maximum payload EINVAL; a range past the end ENOSPC for WRITE and
     * WRITE_ZEROES, EINVAL for the rest (FLUSH has no range). Checked in this order, as this server does. Lengths
     * are unsigned (64 bits with extended headers, under which a WRITE may say PAYLOAD_LEN).
     */
    static int expectedError(int type, int flags, long offset, long length, int tf, boolean allocation, long size,
                             boolean extended) {
        if (!ADVERTISED_BY.containsKey(type)) return NbdException.EINVAL;
        for (FlagRule rule : FLAG_RULES) {
            if ((flags & rule.flag) != 0 && !rule.allows(type, tf, extended)) return NbdException.EINVAL;
        }
        if ((flags & ~ALL_FLAGS) != 0) return NbdException.EINVAL;
        boolean changes = type == CMD_WRITE || type == CMD_TRIM || type == CMD_WRITE_ZEROES;
        if (changes && (tf & TF_READ_ONLY) != 0) return NbdException.EPERM;
        if ((tf & ADVERTISED_BY.get(type)) != ADVERTISED_BY.get(type)) return NbdException.EINVAL;
        if (type == CMD_BLOCK_STATUS && (!allocation || length == 0)) return NbdException.EINVAL;
        boolean overMaximum = Long.compareUnsigned(length, MAX_PAYLOAD) > 0;
        if ((type == CMD_READ || type == CMD_WRITE) && overMaximum) return NbdException.EINVAL;
        boolean pastEnd = Long.compareUnsigned(offset, size) > 0 || Long.compareUnsigned(length, size - offset) > 0;
        if (type != CMD_FLUSH && pastEnd) {
            return type == CMD_WRITE || type == CMD_WRITE_ZEROES ? NbdException.ENOSPC : NbdException.EINVAL;
        }
        return 0;
    }

    /**
     * Reads the server's replies until end of stream and checks each against its request.
     *
     * @return the reply bytes read
     * @throws AssertionError naming the request whose reply is wrong, missing, or followed by more bytes
     */
    long check(ReadableByteChannel channel) {
        Replies in = new Replies(channel);
        for (Sent r : sent) {
            try {
                if (!in.more()) throw new AssertionError("no reply to " + r + " (" + sent.size() + " requests sent)");
                byte[] expected = r.type() == CMD_READ && r.error() == 0
                        ? Arrays.copyOfRange(model, (int) r.offset(), (int) (r.offset() + r.length())) : null;
                if (structured) {
                    structuredReply(in, r, expected);
                } else {
                    simpleReply(in, r, expected);
                }
            } catch (IOException e) {
                throw new AssertionError("the reply to " + r + " was cut: " + e, e);
            }
            apply(r);
        }
        try {
            if (in.more()) throw new AssertionError("bytes after the reply to the last of " + sent.size() + " requests");
        } catch (IOException e) {
            throw new AssertionError("a partial reply after the last of " + sent.size() + " requests: " + e, e);
        }
        return in.total;
    }

    private static void simpleReply(Replies in, Sent r, byte[] expected) throws IOException {
        int magic = in.getInt();
        expect(magic == SIMPLE_REPLY_MAGIC, r, "simple reply magic 0x%x", magic);
        int error = in.getInt();
        long cookie = in.getLong();
        expect(cookie == r.cookie(), r, "cookie 0x%x", cookie);
        expect(error == r.error(), r, "error %d", error);
        if (expected != null) in.expectBytes(expected, r, r.offset());
    }

    private void structuredReply(Replies in, Sent r, byte[] expected) throws IOException {
        long covered = 0;
        boolean[] seen = expected != null ? new boolean[expected.length] : null;
        int chunks = 0;
        boolean blockStatus = false;
        for (boolean done = false; !done; chunks++) {
            int magic = in.getInt();
            expect(magic == (extended ? EXTENDED_REPLY_MAGIC : STRUCTURED_REPLY_MAGIC), r, "chunk %d: reply magic 0x%x",
                    chunks, magic);
            int flags = in.getShort() & 0xffff;
            int type = in.getShort() & 0xffff;
            long cookie = in.getLong();
            if (extended) {
                long offset = in.getLong();
                expect(offset == r.offset(), r, "chunk %d: offset %s, not the request's", chunks,
                        Long.toUnsignedString(offset));
            }
            long length = extended ? in.getLong() : Integer.toUnsignedLong(in.getInt());
            expect(length >= 0 && length <= MAX_PAYLOAD + 64, r, "chunk %d: length %s", chunks,
                    Long.toUnsignedString(length));
            expect(cookie == r.cookie(), r, "chunk %d: cookie 0x%x", chunks, cookie);
            expect((flags & ~REPLY_FLAG_DONE) == 0, r, "chunk %d: flags 0x%x", chunks, flags);
            done = (flags & REPLY_FLAG_DONE) != 0;
            if (r.error() != 0) {
                expect(type == REPLY_TYPE_ERROR && done && chunks == 0, r, "chunk %d: type 0x%x flags 0x%x instead of "
                        + "one ERROR chunk with DONE", chunks, type, flags);
                expect(length >= 6, r, "ERROR chunk of length %d", length);
                int error = in.getInt();
                int messageLength = in.getShort() & 0xffff;
                expect(error == r.error(), r, "error %d", error);
                expect(length == 6 + messageLength, r, "ERROR chunk of length %d with a %d-byte message", length, messageLength);
                in.skip(messageLength);
                return;
            }
            switch (type) {
                case REPLY_TYPE_NONE:
                    expect(done && length == 0, r, "chunk %d: NONE chunk of length %d, DONE=%b", chunks, length, done);
                    break;
                case REPLY_TYPE_OFFSET_DATA: {
                    expect(r.type() == CMD_READ && length > 8, r, "chunk %d: OFFSET_DATA of length %d", chunks, length);
                    long at = in.getLong();
                    long n = length - 8;
                    covered += cover(r, seen, at, n, chunks);
                    in.expectBytes(Arrays.copyOfRange(expected, (int) (at - r.offset()), (int) (at - r.offset() + n)), r, at);
                    break;
                }
                case REPLY_TYPE_OFFSET_HOLE: {
                    expect(r.type() == CMD_READ && length == 12, r, "chunk %d: OFFSET_HOLE of length %d", chunks, length);
                    expect((r.flags() & CMD_FLAG_DF) == 0, r, "chunk %d: OFFSET_HOLE in a DF read", chunks);
                    long at = in.getLong();
                    long n = Integer.toUnsignedLong(in.getInt());
                    covered += cover(r, seen, at, n, chunks);
                    for (long i = at - r.offset(); i < at - r.offset() + n; i++) {
                        expect(expected[(int) i] == 0, r, "OFFSET_HOLE over non-zero data at %d", r.offset() + i);
                    }
                    break;
                }
                case REPLY_TYPE_BLOCK_STATUS:
                case REPLY_TYPE_BLOCK_STATUS_EXT:
                    expect(r.type() == CMD_BLOCK_STATUS && !blockStatus, r, "chunk %d: a BLOCK_STATUS chunk", chunks);
                    expect(extended || type == REPLY_TYPE_BLOCK_STATUS, r, "BLOCK_STATUS_EXT without extended headers");
                    blockStatus = true;
                    blockStatus(in, r, length, type == REPLY_TYPE_BLOCK_STATUS_EXT);
                    break;
                default:
                    expect(false, r, "chunk %d: type 0x%x", chunks, type);
            }
        }
        if (r.type() == CMD_READ) {
            expect(covered == r.length(), r, "READ chunks cover %d of its %d bytes", covered, r.length());
            expect((r.flags() & CMD_FLAG_DF) == 0 || chunks == 1, r, "a DF READ in %d chunks", chunks);
        } else if (r.type() == CMD_BLOCK_STATUS) {
            expect(blockStatus, r, "no BLOCK_STATUS chunk");
        } else {
            expect(chunks == 1, r, "%d chunks for a command without payload", chunks);
        }
    }

    /** Marks [at, at + n) of a READ as answered once; returns n. */
    private static long cover(Sent r, boolean[] seen, long at, long n, int chunk) {
        expect(n > 0 && at - r.offset() >= 0 && at - r.offset() + n <= r.length(), r,
                "chunk %d: range %s+%d outside the request", chunk, Long.toUnsignedString(at), n);
        for (int i = (int) (at - r.offset()); i < at - r.offset() + n; i++) {
            expect(!seen[i], r, "chunk %d: byte %d answered twice", chunk, r.offset() + i);
            seen[i] = true;
        }
        return n;
    }

    /** A compact BLOCK_STATUS chunk, or a wide one (BLOCK_STATUS_EXT: a count, 64-bit lengths and padding). */
    private static void blockStatus(Replies in, Sent r, long length, boolean wide) throws IOException {
        int prefix = wide ? 8 : 4;
        int size = wide ? 16 : 8;
        expect(length >= prefix + size && (length - prefix) % size == 0, r, "BLOCK_STATUS chunk of length %d", length);
        int context = in.getInt();
        expect(context == BASE_ALLOCATION_ID, r, "BLOCK_STATUS for context %d", context);
        long descriptors = (length - prefix) / size;
        if (wide) {
            long count = Integer.toUnsignedLong(in.getInt());
            expect(count == 0 || count == descriptors, r, "a descriptor count of %d for %d descriptors", count, descriptors);
        }
        expect((r.flags() & CMD_FLAG_REQ_ONE) == 0 || descriptors == 1, r, "%d descriptors with REQ_ONE", descriptors);
        long total = 0;
        for (long i = 0; i < descriptors; i++) {
            long extent = wide ? in.getLong() : Integer.toUnsignedLong(in.getInt());
            if (wide) expect(in.getInt() == 0, r, "descriptor %d: padding not zero", i);
            int status = in.getInt();
            expect(extent > 0, r, "descriptor %d of length %s", i, Long.toUnsignedString(extent));
            expect((status & ~(STATE_HOLE | STATE_ZERO)) == 0, r, "descriptor %d: status 0x%x", i, status);
            total += extent;
        }
        expect(total <= r.length(), r, "descriptors describe %d bytes, more than the %d asked", total, r.length());
    }

    private static void expect(boolean holds, Sent r, String format, Object... args) {
        if (!holds) throw new AssertionError("reply to " + r + ": " + String.format(Locale.ROOT, format, args));
    }

    /** Buffered big-endian reads off the client's socket. */
    private static final class Replies {
        private final ReadableByteChannel channel;
        private final ByteBuffer buffer = ByteBuffer.allocate(256 << 10).flip();
        private boolean ended;
        long total;

        Replies(ReadableByteChannel channel) {
            this.channel = channel;
        }

        /**
         * True when another byte comes. End of stream, or a reset (Linux delivers every byte queued before the
         * server closed with requests unread, then ECONNRESET), ends the replies.
         */
        boolean more() throws IOException {
            if (buffer.hasRemaining()) return true;
            if (ended) return false;
            try {
                fill(1);
            } catch (EOFException e) {
                return false;
            } catch (IOException reset) {
                ended = true;
                return false;
            }
            return true;
        }

        private void fill(int need) throws IOException {
            if (buffer.remaining() >= need) return;
            buffer.compact();
            try {
                while (buffer.position() < need) {
                    int n = ended ? -1 : channel.read(buffer);
                    if (n < 0) {
                        ended = true;
                        throw new EOFException("end of stream with " + buffer.position() + " of " + need + " bytes");
                    }
                    total += n;
                }
            } finally {
                buffer.flip();
            }
        }

        int getInt() throws IOException {
            fill(4);
            return buffer.getInt();
        }

        short getShort() throws IOException {
            fill(2);
            return buffer.getShort();
        }

        long getLong() throws IOException {
            fill(8);
            return buffer.getLong();
        }

        void skip(long n) throws IOException {
            while (n > 0) {
                fill(1);
                int step = (int) Math.min(n, buffer.remaining());
                buffer.position(buffer.position() + step);
                n -= step;
            }
        }

        /** Reads expected.length bytes, which must be expected; at is the export offset of the first. */
        void expectBytes(byte[] expected, Sent r, long at) throws IOException {
            for (int i = 0; i < expected.length; ) {
                fill(1);
                int step = Math.min(expected.length - i, buffer.remaining());
                int mismatch = Arrays.mismatch(buffer.array(), buffer.arrayOffset() + buffer.position(),
                        buffer.arrayOffset() + buffer.position() + step, expected, i, i + step);
                expect(mismatch < 0, r, "READ data differs from what was written at %d", at + i + mismatch);
                buffer.position(buffer.position() + step);
                i += step;
            }
        }
    }
}

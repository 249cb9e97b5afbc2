package io.pagewise.nbd.server.protocol;

import static io.pagewise.nbd.wire.Protocol.*;

import java.nio.ByteBuffer;
import java.util.List;

/**
 * Encodes replies into a request's segments from what the executor left in it: headers are carved from its reply
 * area, payload is sliced from its buffers, nothing is copied. Simple, structured or extended replies, as the
 * session negotiated: an extended chunk has a 32-byte header with the request's offset and a 64-bit length, and
 * BLOCK_STATUS answers with 64-bit extents (BLOCK_STATUS_EXT).
 */
final class ReplyEncoder {
    /** Descriptors in one BLOCK_STATUS reply; the export is asked for no more runs than this. */
    static final int MAX_DESCRIPTORS = 256;
    /**
     * What a BLOCK_STATUS request may hold while it runs, charged to the in-flight budget: the export's list of at
     * most MAX_DESCRIPTORS runs (an Extent and its reference, about 40 bytes each), rounded up.
     */
    static final long BLOCK_STATUS_FOOTPRINT = MAX_DESCRIPTORS * 64L;
    private static final int MAX_MESSAGE = 256;

    private final Session session;
    private final boolean structured;
    private final boolean extended;
    private final int chunkHeader;

    ReplyEncoder(Session session) {
        this.session = session;
        this.structured = session.structuredReplies();
        this.extended = session.extendedHeaders();
        this.chunkHeader = extended ? EXTENDED_HEADER_SIZE : CHUNK_HEADER_SIZE;
    }

    /** The reply to a request that ran: a READ's data and holes, a BLOCK_STATUS's extents, else success. */
    void reply(Request r) {
        switch (r.type) {
            case CMD_READ:
                readReply(r);
                break;
            case CMD_BLOCK_STATUS:
                blockStatus(r, r.extents);
                r.extents = null;
                break;
            default:
                ok(r);
        }
    }

    /** {@return true when a READ's reply may be several chunks}: structured replies, and the client did not ask for DF */
    boolean chunked(Request r) {
        return structured && (r.flags & CMD_FLAG_DF) == 0;
    }

    /** Success without payload. */
    void ok(Request r) {
        start(r);
        if (structured) {
            r.addSegment(chunk(r, REPLY_FLAG_DONE, REPLY_TYPE_NONE, 0, 0).flip());
        } else {
            r.addSegment(simpleHeader(r, 0));
        }
    }

    /** An error, with its message where structured replies can carry one. */
    void error(Request r, int error, String message) {
        start(r);
        if (structured) {
            byte[] text = utf8Within(message, MAX_MESSAGE);
            int n = text.length;
            r.addSegment(chunk(r, REPLY_FLAG_DONE, REPLY_TYPE_ERROR, 6 + n, 6 + n).putInt(error).putShort((short) n)
                    .put(text, 0, n).flip());
        } else {
            r.addSegment(simpleHeader(r, error));
        }
    }

    /** A whole READ reply from the request's buffers: one data run after another, holes as OFFSET_HOLE chunks. */
    private void readReply(Request r) {
        start(r);
        ReadPlan plan = r.plan;
        if (!structured) {
            r.addSegment(simpleHeader(r, 0));
            if (plan.runs() > 0) addPayload(r, plan.data(0)); // without holes: one data run, all of the READ
            return;
        }
        if (plan.runs() == 0) {
            r.addSegment(chunk(r, REPLY_FLAG_DONE, REPLY_TYPE_NONE, 0, 0).flip());
            return;
        }
        for (int k = 0; k < plan.runs(); k++) {
            int done = k == plan.runs() - 1 ? REPLY_FLAG_DONE : 0;
            if (plan.hole(k)) {
                holeChunk(r, done, r.offset + plan.start(k), plan.length(k));
            } else {
                dataChunkHeader(r, done, r.offset + plan.start(k), plan.length(k));
                addPayload(r, plan.data(k));
            }
        }
    }

    /**
     * One part of a READ sent in parts, as the next reply segments of r: with {@link #chunked} replies an
     * OFFSET_DATA chunk of its own; else the header for all of the READ before the first part, then only data.
     */
    void readPart(Request r, long start, ByteBuffer[] part, long length, boolean last) {
        start(r);
        if (chunked(r)) {
            dataChunkHeader(r, last ? REPLY_FLAG_DONE : 0, r.offset + start, length);
        } else if (!r.replied) {
            wholeReadHeader(r);
        }
        for (ByteBuffer piece : part) r.addSegment(piece);
    }

    /** A hole of a READ sent in parts, as an OFFSET_HOLE chunk of its own. */
    void holePart(Request r, long start, long length, boolean last) {
        start(r);
        holeChunk(r, last ? REPLY_FLAG_DONE : 0, r.offset + start, length);
    }

    /**
     * The header that goes before the first part of a READ sent in parts: an OFFSET_DATA chunk for all of it
     * (structured, but one chunk) or a simple reply header.
     */
    private void wholeReadHeader(Request r) {
        if (structured) {
            dataChunkHeader(r, REPLY_FLAG_DONE, r.offset, r.length);
        } else {
            r.addSegment(simpleHeader(r, 0));
        }
    }

    /** An OFFSET_HOLE chunk. */
    private void holeChunk(Request r, int flags, long offset, long length) {
        r.addSegment(chunk(r, flags, REPLY_TYPE_OFFSET_HOLE, 12, 12).putLong(offset).putInt((int) length).flip());
    }

    /** The header of an OFFSET_DATA chunk whose length bytes of data follow as segments of their own. */
    private void dataChunkHeader(Request r, int flags, long offset, long length) {
        r.addSegment(chunk(r, flags, REPLY_TYPE_OFFSET_DATA, 8 + length, 8).putLong(offset).flip());
    }

    /**
     * A BLOCK_STATUS reply: one chunk per meta context the session selected, in its order, the last with DONE. Each
     * has that context's runs from r.offset as descriptors, neighbours with the same status merged, at most one with
     * REQ_ONE: for base:allocation a hole is HOLE|ZERO, for a dirty bitmap a changed run is DIRTY, for allocation depth
     * the depth; when the runs say nothing about r.offset, one descriptor claims all of the range as data, as dirty, or
     * as the outermost layer's. With extended headers the
     * descriptors have 64-bit lengths, and their count follows the context id.
     */
    private void blockStatus(Request r, List<List<MetaContext.Run>> runs) {
        List<MetaContext> contexts = session.contexts();
        int limit = descriptorLimit(r, contexts.size());
        int prefix = extended ? 8 : 4;
        ByteBuffer area = r.area.clear();
        r.clearSegments();
        int base = 0;
        for (int i = 0; i < contexts.size(); i++) {
            MetaContext context = contexts.get(i);
            area.position(base + chunkHeader + prefix);
            int count = 0;
            long covered = r.offset;
            int lastStatus = -1;
            for (MetaContext.Run run : runs.get(i)) {
                long start = Math.max(run.offset(), covered);
                long end = Math.min(run.end(), r.offset + r.length);
                if (start != covered || end <= start) break;
                int status = run.status();
                if (count > 0 && status == lastStatus) {
                    growLastDescriptor(area, end - start);
                } else {
                    if (count == limit) break;
                    putDescriptor(area, end - start, status);
                    count++;
                    lastStatus = status;
                }
                covered = end;
            }
            if (count == 0) {
                putDescriptor(area, r.length, context.unknownStatus());
                count = 1;
            }
            int end = area.position();
            int payload = end - base - chunkHeader;
            area.position(base);
            ByteBuffer head = chunk(r, i == contexts.size() - 1 ? REPLY_FLAG_DONE : 0,
                    extended ? REPLY_TYPE_BLOCK_STATUS_EXT : REPLY_TYPE_BLOCK_STATUS, payload, prefix)
                    .putInt(context.id());
            if (extended) head.putInt(count);
            r.addSegment(area.slice(base, chunkHeader + payload));
            area.position(end);
            base = end;
        }
    }

    /** A descriptor: a 32-bit length and the status, or with extended headers a 64-bit length, padding, status. */
    private void putDescriptor(ByteBuffer area, long length, int status) {
        if (extended) {
            area.putLong(length).putInt(0).putInt(status);
        } else {
            area.putInt((int) length).putInt(status);
        }
    }

    /** Adds more to the length of the descriptor just put; a compact one stays within the 32-bit request. */
    private void growLastDescriptor(ByteBuffer area, long more) {
        if (extended) {
            int at = area.position() - 16;
            area.putLong(at, area.getLong(at) + more);
        } else {
            int at = area.position() - 8;
            area.putInt(at, (int) (Integer.toUnsignedLong(area.getInt(at)) + more));
        }
    }

    /**
     * {@return the most descriptors each chunk of the reply to BLOCK_STATUS request r carries}: one with REQ_ONE, else
     * {@link #MAX_DESCRIPTORS}, or fewer when the chunks of all the contexts would not fit the request's reply area
     *
     * @param r        the request
     * @param contexts the meta contexts the reply has a chunk for
     */
    static int descriptorLimit(Request r, int contexts) {
        if ((r.flags & CMD_FLAG_REQ_ONE) != 0) return 1;
        int perChunk = Request.HEADER_AREA / Math.max(1, contexts) - EXTENDED_HEADER_SIZE - 8;
        return Math.max(1, Math.min(MAX_DESCRIPTORS, perChunk / 16));
    }

    /** Adds the buffers a data run was read into as segments, each from its start to the end of what was read. */
    private static void addPayload(Request r, ByteBuffer[] run) {
        for (ByteBuffer slice : run) r.addSegment(slice.flip());
    }

    /** Starts a new reply in r: no segments, an empty reply area. */
    private static void start(Request r) {
        r.clearSegments();
        r.area.clear();
    }

    private static ByteBuffer simpleHeader(Request r, int error) {
        return r.area.putInt(SIMPLE_REPLY_MAGIC).putInt(error).putLong(r.cookie).flip();
    }

    /**
     * Carves the next chunk of the request's reply area: a structured or extended reply header, then room for extra
     * bytes of payload that the caller puts before flipping it.
     */
    private ByteBuffer chunk(Request r, int flags, int type, long payloadLength, int extra) {
        ByteBuffer area = r.area;
        ByteBuffer chunk = area.slice(area.position(), chunkHeader + extra);
        area.position(area.position() + chunkHeader + extra);
        chunk.putInt(extended ? EXTENDED_REPLY_MAGIC : STRUCTURED_REPLY_MAGIC).putShort((short) flags)
                .putShort((short) type).putLong(r.cookie);
        // An extended chunk repeats the request's offset, whatever offset its payload names.
        return extended ? chunk.putLong(r.offset).putLong(payloadLength) : chunk.putInt((int) payloadLength);
    }
}

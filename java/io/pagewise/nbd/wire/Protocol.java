package io.pagewise.nbd.wire;

/**
 * NBD wire constants, as numbered by {@code doc/proto.md} of the NetworkBlockDevice/nbd repository. All fields are
 * big-endian on the wire.
 */
public final class Protocol {
    private Protocol() {}

    // Handshake
    public static final long NBDMAGIC = 0x4e42444d41474943L;
    public static final long IHAVEOPT = 0x49484156454F5054L;
    public static final long OPTION_REPLY_MAGIC = 0x3e889045565a9L;

    public static final int FLAG_FIXED_NEWSTYLE = 1;
    public static final int FLAG_NO_ZEROES = 1 << 1;
    public static final int CLIENT_FIXED_NEWSTYLE = 1;
    public static final int CLIENT_NO_ZEROES = 1 << 1;
    public static final int KNOWN_CLIENT_FLAGS = CLIENT_FIXED_NEWSTYLE | CLIENT_NO_ZEROES;

    public static final int OPT_EXPORT_NAME = 1;
    public static final int OPT_ABORT = 2;
    public static final int OPT_LIST = 3;
    public static final int OPT_STARTTLS = 5;
    public static final int OPT_INFO = 6;
    public static final int OPT_GO = 7;
    public static final int OPT_STRUCTURED_REPLY = 8;
    public static final int OPT_LIST_META_CONTEXT = 9;
    public static final int OPT_SET_META_CONTEXT = 10;
    public static final int OPT_EXTENDED_HEADERS = 11;
    /** Withdrawn from the spec; named only so that logs can say what a client sent. */
    public static final int OPT_PEEK_EXPORT = 4;

    public static final int REP_ACK = 1;
    public static final int REP_SERVER = 2;
    public static final int REP_INFO = 3;
    public static final int REP_META_CONTEXT = 4;
    public static final int REP_ERR_UNSUP = 0x80000000 | 1;
    public static final int REP_ERR_POLICY = 0x80000000 | 2;
    public static final int REP_ERR_INVALID = 0x80000000 | 3;
    public static final int REP_ERR_PLATFORM = 0x80000000 | 4;
    public static final int REP_ERR_TLS_REQD = 0x80000000 | 5;
    public static final int REP_ERR_UNKNOWN = 0x80000000 | 6;
    public static final int REP_ERR_SHUTDOWN = 0x80000000 | 7;
    public static final int REP_ERR_BLOCK_SIZE_REQD = 0x80000000 | 8;
    public static final int REP_ERR_TOO_BIG = 0x80000000 | 9;
    public static final int REP_ERR_EXT_HEADER_REQD = 0x80000000 | 10;

    public static final int INFO_EXPORT = 0;
    public static final int INFO_NAME = 1;
    public static final int INFO_DESCRIPTION = 2;
    public static final int INFO_BLOCK_SIZE = 3;

    public static final String BASE_ALLOCATION = "base:allocation";
    /** The id this server gives base:allocation when a client selects it. */
    public static final int BASE_ALLOCATION_ID = 1;
    public static final int STATE_HOLE = 1;
    public static final int STATE_ZERO = 1 << 1;

    // Transmission flags
    public static final int TF_HAS_FLAGS = 1;
    public static final int TF_READ_ONLY = 1 << 1;
    public static final int TF_SEND_FLUSH = 1 << 2;
    public static final int TF_SEND_FUA = 1 << 3;
    public static final int TF_SEND_TRIM = 1 << 5;
    public static final int TF_SEND_WRITE_ZEROES = 1 << 6;
    public static final int TF_SEND_DF = 1 << 7;
    public static final int TF_CAN_MULTI_CONN = 1 << 8;
    public static final int TF_SEND_CACHE = 1 << 10;
    public static final int TF_SEND_FAST_ZERO = 1 << 11;
    public static final int TF_BLOCK_STATUS_PAYLOAD = 1 << 12;

    // Requests and replies
    public static final int REQUEST_MAGIC = 0x25609513;
    public static final int SIMPLE_REPLY_MAGIC = 0x67446698;
    public static final int STRUCTURED_REPLY_MAGIC = 0x668e33ef;
    public static final int EXTENDED_REQUEST_MAGIC = 0x21e41c71;
    public static final int EXTENDED_REPLY_MAGIC = 0x6e8a278c;
    public static final int REQUEST_HEADER_SIZE = 28;
    public static final int SIMPLE_REPLY_HEADER_SIZE = 16;
    public static final int CHUNK_HEADER_SIZE = 20;
    /** Extended requests and extended reply chunks: 64-bit lengths, and the reply repeats the request's offset. */
    public static final int EXTENDED_HEADER_SIZE = 32;

    public static final int CMD_READ = 0;
    public static final int CMD_WRITE = 1;
    public static final int CMD_DISC = 2;
    public static final int CMD_FLUSH = 3;
    public static final int CMD_TRIM = 4;
    public static final int CMD_CACHE = 5;
    public static final int CMD_WRITE_ZEROES = 6;
    public static final int CMD_BLOCK_STATUS = 7;
    /** The experimental RESIZE extension's; not served, named for the logs. */
    public static final int CMD_RESIZE = 8;

    public static final int CMD_FLAG_FUA = 1;
    public static final int CMD_FLAG_NO_HOLE = 1 << 1;
    public static final int CMD_FLAG_DF = 1 << 2;
    public static final int CMD_FLAG_REQ_ONE = 1 << 3;
    public static final int CMD_FLAG_FAST_ZERO = 1 << 4;
    /** Extended headers only: the length is that of a payload following the header, not the effect's. */
    public static final int CMD_FLAG_PAYLOAD_LEN = 1 << 5;

    public static final int REPLY_FLAG_DONE = 1;
    public static final int REPLY_TYPE_NONE = 0;
    public static final int REPLY_TYPE_OFFSET_DATA = 1;
    public static final int REPLY_TYPE_OFFSET_HOLE = 2;
    public static final int REPLY_TYPE_BLOCK_STATUS = 5;
    /** Extended headers only: 64-bit extent lengths. */
    public static final int REPLY_TYPE_BLOCK_STATUS_EXT = 6;
    public static final int REPLY_TYPE_ERROR = 0x8000 | 1;
    public static final int REPLY_TYPE_ERROR_OFFSET = 0x8000 | 2;

    /**
     * This implementation's limit on option data and option replies, both ways: longer ones are refused without being
     * stored; every legitimate one is far smaller.
     */
    public static final int MAX_OPTION_LENGTH = 64 * 1024;

    /** Payloads below this size must not be treated as abuse (spec: 2^25). */
    public static final int MIN_MAX_PAYLOAD = 32 << 20;

    /**
     * The largest READ or WRITE payload the server accepts and advertises (NBD_INFO_BLOCK_SIZE maximum): nbdkit's
     * limit, and what libnbd sends at most. The NBD project's test client (integrityhuge) sends up to 50 MB.
     */
    public static final int MAX_PAYLOAD = 64 << 20;

    /** The longest string the protocol allows anywhere, error messages included (spec: "Conventions"). */
    public static final int MAX_STRING = 4096;

    /**
     * {@return text as UTF-8, cut to at most maxBytes on a character boundary}: a message that echoes what a client
     * sent (an export name of 4096 bytes) must still fit the limit, and a cut inside a character is not UTF-8.
     */
    public static byte[] utf8Within(String text, int maxBytes) {
        byte[] bytes = text.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        if (bytes.length <= maxBytes) return bytes;
        int end = maxBytes;
        while (end > 0 && (bytes[end] & 0xC0) == 0x80) end--; // bytes[end] continues a character: cut before it
        return java.util.Arrays.copyOf(bytes, end);
    }

    public static String commandName(int type) {
        switch (type) {
            case CMD_READ: return "READ";
            case CMD_WRITE: return "WRITE";
            case CMD_DISC: return "DISC";
            case CMD_FLUSH: return "FLUSH";
            case CMD_TRIM: return "TRIM";
            case CMD_CACHE: return "CACHE";
            case CMD_WRITE_ZEROES: return "WRITE_ZEROES";
            case CMD_BLOCK_STATUS: return "BLOCK_STATUS";
            case CMD_RESIZE: return "RESIZE";
            default: return "CMD_" + type;
        }
    }

    public static String optionName(int option) {
        switch (option) {
            case OPT_EXPORT_NAME: return "EXPORT_NAME";
            case OPT_ABORT: return "ABORT";
            case OPT_LIST: return "LIST";
            case OPT_STARTTLS: return "STARTTLS";
            case OPT_INFO: return "INFO";
            case OPT_GO: return "GO";
            case OPT_STRUCTURED_REPLY: return "STRUCTURED_REPLY";
            case OPT_LIST_META_CONTEXT: return "LIST_META_CONTEXT";
            case OPT_SET_META_CONTEXT: return "SET_META_CONTEXT";
            case OPT_EXTENDED_HEADERS: return "EXTENDED_HEADERS";
            case OPT_PEEK_EXPORT: return "PEEK_EXPORT";
            default: return "OPT_" + Integer.toUnsignedString(option);
        }
    }

    /** {@return the name of an option reply type}, or its number for one the spec does not define */
    public static String replyName(int type) {
        switch (type) {
            case REP_ACK: return "ACK";
            case REP_SERVER: return "SERVER";
            case REP_INFO: return "INFO";
            case REP_META_CONTEXT: return "META_CONTEXT";
            case REP_ERR_UNSUP: return "ERR_UNSUP";
            case REP_ERR_POLICY: return "ERR_POLICY";
            case REP_ERR_INVALID: return "ERR_INVALID";
            case REP_ERR_PLATFORM: return "ERR_PLATFORM";
            case REP_ERR_TLS_REQD: return "ERR_TLS_REQD";
            case REP_ERR_UNKNOWN: return "ERR_UNKNOWN";
            case REP_ERR_SHUTDOWN: return "ERR_SHUTDOWN";
            case REP_ERR_BLOCK_SIZE_REQD: return "ERR_BLOCK_SIZE_REQD";
            case REP_ERR_TOO_BIG: return "ERR_TOO_BIG";
            case REP_ERR_EXT_HEADER_REQD: return "ERR_EXT_HEADER_REQD";
            default: return "REP_0x" + Integer.toHexString(type);
        }
    }
}

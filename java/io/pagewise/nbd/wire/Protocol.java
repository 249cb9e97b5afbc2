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

    public static final int REP_ACK = 1;
    public static final int REP_SERVER = 2;
    public static final int REP_INFO = 3;
    public static final int REP_META_CONTEXT = 4;
    public static final int REP_ERR_UNSUP = 0x80000000 | 1;
    public static final int REP_ERR_POLICY = 0x80000000 | 2;
    public static final int REP_ERR_INVALID = 0x80000000 | 3;
    public static final int REP_ERR_TLS_REQD = 0x80000000 | 5;
    public static final int REP_ERR_UNKNOWN = 0x80000000 | 6;
    public static final int REP_ERR_SHUTDOWN = 0x80000000 | 7;
    public static final int REP_ERR_TOO_BIG = 0x80000000 | 9;

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

    // Requests and replies
    public static final int REQUEST_MAGIC = 0x25609513;
    public static final int SIMPLE_REPLY_MAGIC = 0x67446698;
    public static final int STRUCTURED_REPLY_MAGIC = 0x668e33ef;
    public static final int REQUEST_HEADER_SIZE = 28;
    public static final int SIMPLE_REPLY_HEADER_SIZE = 16;
    public static final int CHUNK_HEADER_SIZE = 20;

    public static final int CMD_READ = 0;
    public static final int CMD_WRITE = 1;
    public static final int CMD_DISC = 2;
    public static final int CMD_FLUSH = 3;
    public static final int CMD_TRIM = 4;
    public static final int CMD_CACHE = 5;
    public static final int CMD_WRITE_ZEROES = 6;
    public static final int CMD_BLOCK_STATUS = 7;

    public static final int CMD_FLAG_FUA = 1;
    public static final int CMD_FLAG_NO_HOLE = 1 << 1;
    public static final int CMD_FLAG_DF = 1 << 2;
    public static final int CMD_FLAG_REQ_ONE = 1 << 3;
    public static final int CMD_FLAG_FAST_ZERO = 1 << 4;

    public static final int REPLY_FLAG_DONE = 1;
    public static final int REPLY_TYPE_NONE = 0;
    public static final int REPLY_TYPE_OFFSET_DATA = 1;
    public static final int REPLY_TYPE_OFFSET_HOLE = 2;
    public static final int REPLY_TYPE_BLOCK_STATUS = 5;
    public static final int REPLY_TYPE_ERROR = 0x8000 | 1;

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
            default: return "OPT_" + Integer.toUnsignedString(option);
        }
    }
}

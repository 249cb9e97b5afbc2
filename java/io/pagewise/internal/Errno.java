package io.pagewise.internal;

import io.pagewise.system.NativeIOException;
import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;

/**
 * The one errno table: the name of every errno number Linux defines, the numbers the library decides on, their texts
 * (read from the C library through {@link ErrnoTexts} once, when the native calls become available, so failing paths
 * never go back into native code; built in for the numbers below, for the pure-Java path), the NBD protocol's subset with its names, and the NBD error a failed
 * call answers. It turns {@code -errno} results into exceptions: the JDK's {@link NoSuchFileException},
 * {@link AccessDeniedException} and {@link FileAlreadyExistsException} where opening fails that way, else
 * {@link NativeIOException}; all of them are {@link io.pagewise.system.SystemCallFailure}s. The NBD part is plain
 * Java: the client and server use it without the native library.
 */
public final class Errno {
    public static final int EPERM = 1;
    public static final int ENOENT = 2;
    public static final int EIO = 5;
    public static final int ENXIO = 6;
    public static final int ENOMEM = 12;
    public static final int EACCES = 13;
    public static final int EFAULT = 14;
    public static final int EEXIST = 17;
    public static final int ENODEV = 19;
    public static final int EISDIR = 21;
    public static final int EINVAL = 22;
    public static final int EFBIG = 27;
    public static final int ENOSPC = 28;
    public static final int ESPIPE = 29;
    public static final int EROFS = 30;
    public static final int ENAMETOOLONG = 36;
    public static final int ENOSYS = 38;
    public static final int EOVERFLOW = 75;
    public static final int EOPNOTSUPP = 95;
    public static final int ESHUTDOWN = 108;
    public static final int EDQUOT = 122;

    private static final int MAX = 256;
    /** Every errno Linux defines on x86_64 and aarch64 (asm-generic numbers), by number; aliases take glibc's name.
     * ErrnoTest has each architecture's C compiler check it against its headers. */
    private static final String[] NAMES = {
            null, "EPERM", "ENOENT", "ESRCH", "EINTR", "EIO", "ENXIO", "E2BIG", "ENOEXEC", "EBADF", "ECHILD",
            "EAGAIN", "ENOMEM", "EACCES", "EFAULT", "ENOTBLK", "EBUSY", "EEXIST", "EXDEV", "ENODEV", "ENOTDIR",
            "EISDIR", "EINVAL", "ENFILE", "EMFILE", "ENOTTY", "ETXTBSY", "EFBIG", "ENOSPC", "ESPIPE", "EROFS",
            "EMLINK", "EPIPE", "EDOM", "ERANGE", "EDEADLK", "ENAMETOOLONG", "ENOLCK", "ENOSYS", "ENOTEMPTY", "ELOOP",
            null, "ENOMSG", "EIDRM", "ECHRNG", "EL2NSYNC", "EL3HLT", "EL3RST", "ELNRNG", "EUNATCH", "ENOCSI",
            "EL2HLT", "EBADE", "EBADR", "EXFULL", "ENOANO", "EBADRQC", "EBADSLT", null, "EBFONT", "ENOSTR",
            "ENODATA", "ETIME", "ENOSR", "ENONET", "ENOPKG", "EREMOTE", "ENOLINK", "EADV", "ESRMNT", "ECOMM",
            "EPROTO", "EMULTIHOP", "EDOTDOT", "EBADMSG", "EOVERFLOW", "ENOTUNIQ", "EBADFD", "EREMCHG", "ELIBACC",
            "ELIBBAD", "ELIBSCN", "ELIBMAX", "ELIBEXEC", "EILSEQ", "ERESTART", "ESTRPIPE", "EUSERS", "ENOTSOCK",
            "EDESTADDRREQ", "EMSGSIZE", "EPROTOTYPE", "ENOPROTOOPT", "EPROTONOSUPPORT", "ESOCKTNOSUPPORT",
            "EOPNOTSUPP", "EPFNOSUPPORT", "EAFNOSUPPORT", "EADDRINUSE", "EADDRNOTAVAIL", "ENETDOWN", "ENETUNREACH",
            "ENETRESET", "ECONNABORTED", "ECONNRESET", "ENOBUFS", "EISCONN", "ENOTCONN", "ESHUTDOWN", "ETOOMANYREFS",
            "ETIMEDOUT", "ECONNREFUSED", "EHOSTDOWN", "EHOSTUNREACH", "EALREADY", "EINPROGRESS", "ESTALE", "EUCLEAN",
            "ENOTNAM", "ENAVAIL", "EISNAM", "EREMOTEIO", "EDQUOT", "ENOMEDIUM", "EMEDIUMTYPE", "ECANCELED", "ENOKEY",
            "EKEYEXPIRED", "EKEYREVOKED", "EKEYREJECTED", "EOWNERDEAD", "ENOTRECOVERABLE", "ERFKILL", "EHWPOISON"
    };
    /** The C library's texts, read once when the native calls become available. */
    private static final String[] DESCRIPTIONS = new String[MAX];
    /** glibc's texts for the numbers above, for when the C library's are not loaded; ErrnoTest compares. */
    private static final String[] BUILT_IN_DESCRIPTIONS = new String[MAX];

    static {
        builtIn(EPERM, "Operation not permitted");
        builtIn(ENOENT, "No such file or directory");
        builtIn(EIO, "Input/output error");
        builtIn(ENXIO, "No such device or address");
        builtIn(ENOMEM, "Cannot allocate memory");
        builtIn(EACCES, "Permission denied");
        builtIn(EFAULT, "Bad address");
        builtIn(EEXIST, "File exists");
        builtIn(ENODEV, "No such device");
        builtIn(EISDIR, "Is a directory");
        builtIn(EINVAL, "Invalid argument");
        builtIn(EFBIG, "File too large");
        builtIn(ENOSPC, "No space left on device");
        builtIn(ESPIPE, "Illegal seek");
        builtIn(EROFS, "Read-only file system");
        builtIn(ENAMETOOLONG, "File name too long");
        builtIn(ENOSYS, "Function not implemented");
        builtIn(EOVERFLOW, "Value too large for defined data type");
        builtIn(EOPNOTSUPP, "Operation not supported");
        builtIn(ESHUTDOWN, "Cannot send after transport endpoint shutdown");
        builtIn(EDQUOT, "Disk quota exceeded");
    }

    private Errno() {}

    private static void builtIn(int errno, String description) {
        BUILT_IN_DESCRIPTIONS[errno] = description;
    }

    /**
     * Reads the C library's text of every errno that has a name. {@link NativeLibrary} calls it as soon as the native
     * calls are available, before any call can fail, so that a failing call never goes back into native code to
     * describe itself. Not done at class init: loading the JNI library initializes this class before its natives
     * are bound.
     */
    public static void readTexts() {
        for (int i = 1; i < NAMES.length; i++) {
            if (NAMES[i] != null) DESCRIPTIONS[i] = ErrnoTexts.description(i);
        }
    }

    /** The symbolic name, such as {@code ENOSPC}; {@code errno N} for a number Linux gives no name. */
    public static String name(int errno) {
        return errno > 0 && errno < NAMES.length && NAMES[errno] != null ? NAMES[errno] : "errno " + errno;
    }

    /** The C library's text, such as {@code No space left on device}. */
    public static String description(int errno) {
        if (errno <= 0 || errno >= MAX) return "Unknown error " + errno;
        String text = DESCRIPTIONS[errno] != null ? DESCRIPTIONS[errno] : BUILT_IN_DESCRIPTIONS[errno];
        return text != null ? text : "Unknown error " + errno;
    }

    /** The numbers the name table covers, 1 to the highest; for the test that checks them against the headers. */
    static int namedUpTo() {
        return NAMES.length - 1;
    }

    /** The built-in text of errno, or null; for the test that compares them with the C library's. */
    static String builtInDescription(int errno) {
        return errno > 0 && errno < MAX ? BUILT_IN_DESCRIPTIONS[errno] : null;
    }

    /**
     * The NBD protocol's name for one of its error values, which are errno numbers ({@code doc/proto.md}, "Error
     * values"): EPERM, EIO, ENOMEM, EINVAL, ENOSPC, EOVERFLOW, ENOTSUP (the C library's EOPNOTSUPP) and ESHUTDOWN.
     */
    public static String nbdName(int error) {
        switch (error) {
            case EPERM: return "EPERM";
            case EIO: return "EIO";
            case ENOMEM: return "ENOMEM";
            case EINVAL: return "EINVAL";
            case ENOSPC: return "ENOSPC";
            case EOVERFLOW: return "EOVERFLOW";
            case EOPNOTSUPP: return "ENOTSUP";
            case ESHUTDOWN: return "ESHUTDOWN";
            default: return "error " + error;
        }
    }

    /**
     * The NBD error a server answers when a call failed with errno: the same value where the protocol has it, ENOSPC
     * for a full quota or a too large file (as the spec asks), EPERM for any refusal, else EIO.
     */
    public static int toNbd(int errno) {
        switch (errno) {
            case EPERM: case EACCES: case EROFS: return EPERM;
            case ENOSPC: case EDQUOT: case EFBIG: return ENOSPC;
            case EIO: case ENOMEM: case EINVAL: case EOVERFLOW: case EOPNOTSUPP: case ESHUTDOWN: return errno;
            default: return EIO;
        }
    }

    /** An exception for a failed operation on a range; offset {@code -1} means no range. */
    public static NativeIOException exception(long negativeErrno, String operation, Path path, long offset, long length) {
        int errno = (int) -negativeErrno;
        return new NativeIOException(operation, path, offset, length, errno, name(errno), description(errno));
    }

    /**
     * The exception for a failed open, one of the JDK's file exceptions where one fits: {@link NoSuchFileException}
     * for ENOENT, {@link AccessDeniedException} for EACCES and EPERM (the JDK gives EPERM none; it is a refusal too),
     * {@link FileAlreadyExistsException} for EEXIST (CREATE_NEW), else {@link NativeIOException}. Each one carries
     * the errno as a {@link io.pagewise.system.SystemCallFailure}.
     */
    public static IOException openFailure(long negativeErrno, String operation, Path path) {
        int errno = (int) -negativeErrno;
        FailedCall call = new FailedCall(operation, path, -1, 0, errno, name(errno), description(errno));
        switch (errno) {
            case ENOENT: return new FailedCall.NoSuchFile(call);
            case EACCES: case EPERM: return new FailedCall.AccessDenied(call);
            case EEXIST: return new FailedCall.AlreadyExists(call);
            default: return new NativeIOException(operation, path, -1, 0, errno, call.errnoName(), call.description());
        }
    }

    /**
     * What the pure-Java path throws when {@code FileChannel.open} failed with e: the same exception as
     * {@link #openFailure} on the native path, found from the JDK's type or, for other errors, from its reason (the
     * C library's text, which the JDK reports); e itself when its errno cannot be told.
     */
    public static IOException openFailure(FileSystemException e, String operation, Path path) {
        int errno = 0;
        if (e instanceof NoSuchFileException) {
            errno = ENOENT;
        } else if (e instanceof AccessDeniedException) {
            errno = EACCES;
        } else if (e instanceof FileAlreadyExistsException) {
            errno = EEXIST;
        } else if (e.getReason() != null) {
            for (int i = 1; i < MAX && errno == 0; i++) {
                if (e.getReason().equals(description(i))) errno = i;
            }
        }
        if (errno == 0) return e;
        IOException typed = openFailure(-errno, operation, path);
        typed.initCause(e);
        return typed;
    }

    /** Returns result unchanged when it is not negative, else throws for it. */
    public static long check(long result, String operation, Path path, long offset, long length) throws NativeIOException {
        if (result < 0) throw exception(result, operation, path, offset, length);
        return result;
    }

    public static void check(long result, String operation, Path path) throws NativeIOException {
        check(result, operation, path, -1, 0);
    }
}

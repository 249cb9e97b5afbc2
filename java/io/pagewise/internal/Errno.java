package io.pagewise.internal;

import io.pagewise.NativeIOException;
import java.nio.file.Path;

/**
 * The one errno table, paired with {@code native/errors.c}: the errno numbers the library decides on, their names
 * and descriptions (read from the C library once, when it loads, so failing paths never re-enter JNI), the NBD
 * protocol's subset with its names, and the NBD error a failed call answers. It turns {@code -errno} results into
 * {@link NativeIOException}s. The NBD part is plain Java: the client and server use it without the native library.
 */
public final class Errno {
    public static final int EPERM = 1;
    public static final int ENOENT = 2;
    public static final int EIO = 5;
    public static final int ENXIO = 6;
    public static final int ENOMEM = 12;
    public static final int EACCES = 13;
    public static final int EFAULT = 14;
    public static final int ENODEV = 19;
    public static final int EINVAL = 22;
    public static final int EFBIG = 27;
    public static final int ENOSPC = 28;
    public static final int EROFS = 30;
    public static final int ENOSYS = 38;
    public static final int EOVERFLOW = 75;
    public static final int EOPNOTSUPP = 95;
    public static final int ESHUTDOWN = 108;
    public static final int EDQUOT = 122;

    private static final int MAX = 256;
    private static final String[] NAMES = new String[MAX];
    private static final String[] DESCRIPTIONS = new String[MAX];

    private Errno() {}

    private static native String name0(int errno);

    private static native String description0(int errno);

    /**
     * Reads every errno's name and text from the C library. {@link io.pagewise.Native} calls it as soon as the library
     * is loaded, before any call can fail, so that a failing call never re-enters JNI to describe itself. Not done at
     * class init: loading the library initializes this class (JNI_OnLoad's FindClass) before its natives are bound.
     */
    public static void readNames() {
        for (int i = 1; i < MAX; i++) {
            NAMES[i] = name0(i);
            DESCRIPTIONS[i] = description0(i);
        }
    }

    /** The symbolic name, such as {@code ENOSPC}; {@code errno N} when unknown or without the native library. */
    public static String name(int errno) {
        String name = errno > 0 && errno < MAX ? NAMES[errno] : null;
        return name != null ? name : "errno " + errno;
    }

    /** The C library's text, such as {@code No space left on device}. */
    public static String description(int errno) {
        String text = errno > 0 && errno < MAX ? DESCRIPTIONS[errno] : null;
        return text != null ? text : "Unknown error " + errno;
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

    /** Returns result unchanged when it is not negative, else throws for it. */
    public static long check(long result, String operation, Path path, long offset, long length) throws NativeIOException {
        if (result < 0) throw exception(result, operation, path, offset, length);
        return result;
    }

    public static void check(long result, String operation, Path path) throws NativeIOException {
        check(result, operation, path, -1, 0);
    }
}

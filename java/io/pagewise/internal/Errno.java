package io.pagewise.internal;

import io.pagewise.NativeIOException;
import java.nio.file.Path;

/**
 * Pairs with {@code native/errors.c}: turns {@code -errno} results into {@link NativeIOException}s.
 * Names and descriptions are read from the C library once, so failing paths never re-enter JNI.
 */
public final class Errno {
    public static final int EPERM = 1;
    public static final int ENOENT = 2;
    public static final int EIO = 5;
    public static final int ENXIO = 6;
    public static final int ENOMEM = 12;
    public static final int EACCES = 13;
    public static final int EEXIST = 17;
    public static final int EINVAL = 22;
    public static final int EFBIG = 27;
    public static final int ENOSPC = 28;
    public static final int ESPIPE = 29;
    public static final int EROFS = 30;
    public static final int ENODEV = 19;
    public static final int ENOSYS = 38;
    public static final int EOVERFLOW = 75;
    public static final int EOPNOTSUPP = 95;

    private static final int MAX = 256;
    private static final String[] NAMES = new String[MAX];
    private static final String[] DESCRIPTIONS = new String[MAX];
    private static volatile boolean loaded;

    private Errno() {}

    private static native String name0(int errno);

    private static native String description0(int errno);

    private static void load() {
        synchronized (NAMES) {
            if (loaded) return;
            for (int i = 1; i < MAX; i++) {
                NAMES[i] = name0(i);
                DESCRIPTIONS[i] = description0(i);
            }
            loaded = true;
        }
    }

    /** The symbolic name, such as {@code ENOSPC}. */
    public static String name(int errno) {
        if (!loaded) load();
        String name = errno > 0 && errno < MAX ? NAMES[errno] : null;
        return name != null ? name : "errno " + errno;
    }

    /** The C library's text, such as {@code No space left on device}. */
    public static String description(int errno) {
        if (!loaded) load();
        String text = errno > 0 && errno < MAX ? DESCRIPTIONS[errno] : null;
        return text != null ? text : "Unknown error " + errno;
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

package io.pagewise.internal;

import io.pagewise.system.NativeIOException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Refuses paths that are not files or devices before they are opened: opening a FIFO for reading blocks until a
 * writer comes (forever, for a FIFO nobody writes), a pipe has no offsets to read at, and a directory opens
 * read-only and fails only at its first read.
 */
public final class FileKinds {
    private static final int S_IFMT = 0170000;
    private static final int S_IFIFO = 0010000;
    private static final int S_IFDIR = 0040000;
    private static final int S_IFCHR = 0020000;
    private static final int S_IFBLK = 0060000;
    private static final int S_IFSOCK = 0140000;

    private FileKinds() {}

    /**
     * Throws when path exists and is a directory, a FIFO (named pipe, including {@code /dev/stdin} on a pipe) or a
     * socket; does nothing for files, block and character devices, and paths that do not exist (yet). The exception
     * is the {@link NativeIOException} of the failure the open would meet, or the first read after it: EISDIR for a
     * directory, ESPIPE for a pipe (no offsets), ENXIO for a socket (what open(2) says of one).
     *
     * @param path the path about to be opened
     * @throws NativeIOException naming open, the path and what it is
     */
    public static void requireFileOrDevice(Path path) throws IOException {
        // A regular file, the common case, is told by the JDK's basic attributes; the unix:mode view parses its
        // attribute names and builds a map per call, which a merge opening hundreds of files then compiles. A path
        // the stat fails on (missing, unreachable, a name too long...) is left to the open that follows, which says
        // so with its errno.
        if (Files.isRegularFile(path)) return;
        switch (type(path)) {
            case S_IFDIR: throw refused(path, Errno.EISDIR, "Is a directory");
            case S_IFIFO:
                throw refused(path, Errno.ESPIPE, "is a pipe (FIFO), which cannot be read or written at an offset");
            case S_IFSOCK: throw refused(path, Errno.ENXIO, "is a socket");
            default: // a file, a device, or nothing (yet)
        }
    }

    private static NativeIOException refused(Path path, int errno, String what) {
        return new NativeIOException("open", path, -1, 0, errno, Errno.name(errno), what);
    }

    /** {@return whether path is a named pipe}, also {@code /dev/stdin} or a shell's {@code <(...)} on a pipe */
    public static boolean isPipe(Path path) {
        return type(path) == S_IFIFO;
    }

    /** {@return whether path is a character device}, such as {@code /dev/null} */
    public static boolean isCharacterDevice(Path path) {
        return type(path) == S_IFCHR;
    }

    /** {@return whether path is a block device}: FIFOs, sockets and devices are all "other" to the JDK */
    public static boolean isBlockDevice(Path path) {
        return type(path) == S_IFBLK;
    }

    /** The file type bits of path's mode, or -1 when they cannot be read (the open that follows says why). */
    private static int type(Path path) {
        try {
            return (Integer) Files.getAttribute(path, "unix:mode") & S_IFMT;
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
            return -1;
        }
    }
}

package io.pagewise.internal;

import java.io.IOException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;

/**
 * Refuses paths that are not files or devices before they are opened: opening a FIFO for reading blocks until a
 * writer comes (forever, for a FIFO nobody writes), a pipe has no offsets to read at, and a directory opens but
 * then fails every read with an errno that names no path.
 */
public final class FileKinds {
    private static final int S_IFMT = 0170000;
    private static final int S_IFIFO = 0010000;
    private static final int S_IFSOCK = 0140000;

    private FileKinds() {}

    /**
     * Throws when path exists and is a directory, a FIFO (named pipe, including {@code /dev/stdin} on a pipe) or a
     * socket; does nothing for files, block and character devices, and paths that do not exist (yet).
     *
     * @param path the path about to be opened
     * @throws FileSystemException naming the path and what it is
     */
    public static void requireFileOrDevice(Path path) throws IOException {
        BasicFileAttributes attributes;
        try {
            attributes = Files.readAttributes(path, BasicFileAttributes.class);
        } catch (NoSuchFileException e) {
            return; // the open says so, or creates it
        }
        if (attributes.isDirectory()) throw refused(path, "is a directory");
        if (!attributes.isOther()) return;
        int type = mode(path) & S_IFMT;
        if (type == S_IFIFO) {
            throw refused(path, "is a pipe (FIFO), which cannot be read or written at an offset");
        }
        if (type == S_IFSOCK) throw refused(path, "is a socket");
    }

    private static FileSystemException refused(Path path, String what) {
        return new FileSystemException(path.toString(), null, what + "; expected a file or a block device");
    }

    private static int mode(Path path) throws IOException {
        try {
            return (Integer) Files.getAttribute(path, "unix:mode");
        } catch (UnsupportedOperationException | IllegalArgumentException e) {
            return 0; // no unix view: let the open decide
        }
    }
}

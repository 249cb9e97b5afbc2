package io.pagewise;

import java.io.IOException;
import java.nio.file.Path;

/**
 * A system call failed. The message names the operation, the path, the range and the errno, for example
 * {@code pwrite /data/disk.img at 4096 (+65536): No space left on device (ENOSPC)}.
 */
public class NativeIOException extends IOException {
    private final String operation;
    private final transient Path path;
    private final long offset;
    private final long length;
    private final int errno;
    private final String errnoName;

    public NativeIOException(String operation, Path path, long offset, long length, int errno, String errnoName,
                             String description) {
        super(message(operation, path, offset, length, errnoName, description));
        this.operation = operation;
        this.path = path;
        this.offset = offset;
        this.length = length;
        this.errno = errno;
        this.errnoName = errnoName;
    }

    private static String message(String operation, Path path, long offset, long length, String name, String description) {
        StringBuilder text = new StringBuilder(operation);
        if (path != null) text.append(' ').append(path);
        if (offset >= 0) text.append(" at ").append(offset).append(" (+").append(length).append(')');
        return text.append(": ").append(description).append(" (").append(name).append(')').toString();
    }

    /** The failed call, such as {@code pwrite}. */
    public String operation() { return operation; }

    public Path path() { return path; }

    /** The start of the range, or -1 when the call had none. */
    public long offset() { return offset; }

    public long length() { return length; }

    /** The errno value, such as 28. */
    public int errno() { return errno; }

    /** The errno name, such as {@code ENOSPC}. */
    public String errnoName() { return errnoName; }
}

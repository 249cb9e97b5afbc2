package io.pagewise;

import java.io.IOException;
import java.nio.file.Path;

/**
 * A system call failed. The message names the operation, the path, the range and the errno, for example
 * {@code pwrite /data/disk.img at 4096 (+65536): No space left on device (ENOSPC)}.
 */
public class NativeIOException extends IOException {
    /** The failed call. */
    private final String operation;
    private final transient Path path;
    /** The start of the range, or -1. */
    private final long offset;
    /** The length of the range. */
    private final long length;
    /** The errno value. */
    private final int errno;
    /** The errno name. */
    private final String errnoName;

    /**
     * A failure of a system call, with a message made of the parts.
     *
     * @param operation   the failed call, such as {@code pwrite}
     * @param path        the file it acted on, or null
     * @param offset      the start of the range, or -1 when the call had none
     * @param length      the length of the range
     * @param errno       the errno value, such as 28
     * @param errnoName   the errno name, such as {@code ENOSPC}
     * @param description the errno's text, such as {@code No space left on device}
     */
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

    /** {@return the failed call, such as {@code pwrite}} */
    public String operation() { return operation; }

    /** {@return the file the call acted on, or null} */
    public Path path() { return path; }

    /** {@return the start of the range, or -1 when the call had none} */
    public long offset() { return offset; }

    /** {@return the length of the range} */
    public long length() { return length; }

    /** {@return the errno value, such as 28} */
    public int errno() { return errno; }

    /** {@return the errno name, such as {@code ENOSPC}} */
    public String errnoName() { return errnoName; }
}

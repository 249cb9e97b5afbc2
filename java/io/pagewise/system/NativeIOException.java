package io.pagewise.system;

import java.io.IOException;
import java.nio.file.Path;

/**
 * A system call failed. The message names the operation, the path, the range and the errno, for example
 * {@code pwrite /data/disk.img at 4096 (+65536): No space left on device (ENOSPC)}. Failures that the JDK has a type
 * for are that type instead (see {@link SystemCallFailure}): a missing file is a
 * {@link java.nio.file.NoSuchFileException}, not a NativeIOException.
 */
public class NativeIOException extends IOException implements SystemCallFailure {
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
        super(SystemCallFailure.message(operation, path, offset, length, errnoName, description));
        this.operation = operation;
        this.path = path;
        this.offset = offset;
        this.length = length;
        this.errno = errno;
        this.errnoName = errnoName;
    }

    /** {@return the failed call, such as {@code pwrite}} */
    @Override
    public String operation() { return operation; }

    /** {@return the file the call acted on, or null} */
    @Override
    public Path path() { return path; }

    /** {@return the start of the range, or -1 when the call had none} */
    @Override
    public long offset() { return offset; }

    /** {@return the length of the range} */
    @Override
    public long length() { return length; }

    /** {@return the errno value, such as 28} */
    @Override
    public int errno() { return errno; }

    /** {@return the errno name, such as {@code ENOSPC}} */
    @Override
    public String errnoName() { return errnoName; }
}

package io.pagewise.system;

import java.nio.file.Path;

/**
 * A failed system call, as every exception the library throws for one describes it: the call, the path, the range
 * and the errno, which its message names too, for example
 * {@code open /data/disk.img: No such file or directory (ENOENT)}.
 *
 * <p>The exceptions are the JDK's types wherever the JDK has one, on the native path and on the pure-Java path
 * alike: {@link java.nio.file.NoSuchFileException} (ENOENT), {@link java.nio.file.AccessDeniedException} (EACCES
 * or EPERM) and {@link java.nio.file.FileAlreadyExistsException} (EEXIST, from CREATE_NEW) when opening a file
 * fails, and {@link NativeIOException} for every other failed call. Each of them implements this interface, so
 * catch the type you handle and ask this for the errno:
 *
 * <pre>{@code
 * try {
 *     file.write(buffer, offset);
 * } catch (IOException e) {
 *     if (e instanceof SystemCallFailure failure && failure.errnoName().equals("ENOSPC")) makeRoom();
 *     else throw e;
 * }
 * }</pre>
 *
 * <p>Refusals the library decides on without a system call carry no errno: an {@link java.nio.file.AccessDeniedException}
 * for a write to a file open read-only, a {@link java.nio.channels.ClosedChannelException} for use after close.
 */
public interface SystemCallFailure {
    /** {@return the failed call, such as {@code pwrite} or {@code open}} */
    String operation();

    /** {@return the file the call acted on, or null} */
    Path path();

    /** {@return the start of the range, or -1 when the call had none (open, for example)} */
    long offset();

    /** {@return the length of the range, 0 when the call had none} */
    long length();

    /** {@return the errno value, such as 28} */
    int errno();

    /** {@return the errno name, such as {@code ENOSPC}} */
    String errnoName();

    /**
     * The message every exception of a failed system call has, made of its parts: operation, path (when not null),
     * range (when offset is not -1; its length when not 0), description and errno name, for example
     * {@code pwrite /data/disk.img at 4096 (+65536): No space left on device (ENOSPC)}.
     *
     * @param operation   the failed call, such as {@code pwrite}
     * @param path        the file it acted on, or null
     * @param offset      the start of the range, or -1 when the call had none
     * @param length      the length of the range
     * @param errnoName   the errno name, such as {@code ENOSPC}
     * @param description the errno's text, such as {@code No space left on device}
     * @return the message
     */
    static String message(String operation, Path path, long offset, long length, String errnoName,
                          String description) {
        StringBuilder text = new StringBuilder(operation);
        if (path != null) text.append(' ').append(path);
        if (offset >= 0) text.append(" at ").append(offset);
        if (offset >= 0 && length > 0) text.append(" (+").append(length).append(')'); // not for ftruncate's size, lseek
        return text.append(": ").append(description).append(" (").append(errnoName).append(')').toString();
    }
}

package io.pagewise.internal;

import io.pagewise.system.SystemCallFailure;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;

/**
 * What a failed system call reports: the call, the path, the range and the errno, and the one message format made
 * of them, {@code pwrite /data/disk.img at 4096 (+65536): No space left on device (ENOSPC)}. Nested here are the
 * JDK's file exceptions as the library throws them, each also a {@link SystemCallFailure}; they are not exported,
 * so applications catch the JDK type and ask the interface for the errno.
 *
 * @param offset the start of the range, or -1 when the call had none
 */
public record FailedCall(String operation, Path path, long offset, long length, int errno, String errnoName,
                         String description) {

    /** The message, as every exception of a failed call words it. */
    public String message() {
        return SystemCallFailure.message(operation, path, offset, length, errnoName, description);
    }

    /** The JDK's reason text for a file exception: the description and the errno name. */
    private String reason() {
        return description + " (" + errnoName + ")";
    }

    /** A file exception whose every part is its failed call's; getMessage stays in each class, as Throwable owns it. */
    interface Carried extends SystemCallFailure {
        FailedCall call();

        @Override default String operation() { return call().operation(); }
        @Override default Path path() { return call().path(); }
        @Override default long offset() { return call().offset(); }
        @Override default long length() { return call().length(); }
        @Override default int errno() { return call().errno(); }
        @Override default String errnoName() { return call().errnoName(); }
    }

    /** ENOENT. */
    public static final class NoSuchFile extends NoSuchFileException implements Carried {
        private final transient FailedCall call;

        NoSuchFile(FailedCall call) {
            super(String.valueOf(call.path()), null, call.reason());
            this.call = call;
        }

        @Override public String getMessage() { return call.message(); }
        @Override public FailedCall call() { return call; }
    }

    /** EACCES or EPERM. */
    public static final class AccessDenied extends AccessDeniedException implements Carried {
        private final transient FailedCall call;

        AccessDenied(FailedCall call) {
            super(String.valueOf(call.path()), null, call.reason());
            this.call = call;
        }

        @Override public String getMessage() { return call.message(); }
        @Override public FailedCall call() { return call; }
    }

    /** EEXIST, from CREATE_NEW. */
    public static final class AlreadyExists extends FileAlreadyExistsException implements Carried {
        private final transient FailedCall call;

        AlreadyExists(FailedCall call) {
            super(String.valueOf(call.path()), null, call.reason());
            this.call = call;
        }

        @Override public String getMessage() { return call.message(); }
        @Override public FailedCall call() { return call; }
    }
}

package io.pagewise.internal;

import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;

/**
 * Why a file operation failed, for a message: the JDK's file exceptions often carry only the path (a
 * NoSuchFileException's message is the path alone), their type standing for the reason.
 */
public final class FileErrors {
    private FileErrors() {}

    /** {@return the reason a JDK file exception's type stands for, or null for another exception or type} */
    public static String reasonOfType(Exception e) {
        return e instanceof NoSuchFileException ? "no such file or directory"
                : e instanceof AccessDeniedException ? "permission denied"
                : e instanceof FileAlreadyExistsException ? "already exists"
                : e instanceof NotDirectoryException ? "not a directory"
                : e instanceof DirectoryNotEmptyException ? "is a directory that is not empty" : null;
    }

    /** {@return why e happened, without the path}: the system's reason, else its type's, else its message */
    public static String reason(Exception e) {
        if (e instanceof FileSystemException && ((FileSystemException) e).getReason() != null) {
            return ((FileSystemException) e).getReason();
        }
        String byType = reasonOfType(e);
        if (byType != null) return byType;
        return e.getMessage() != null ? e.getMessage() : e.toString();
    }
}

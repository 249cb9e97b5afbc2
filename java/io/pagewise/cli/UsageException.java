package io.pagewise.cli;

/** A command-line mistake: exit status 2. */
final class UsageException extends Exception {
    UsageException(String message) {
        super(message);
    }
}

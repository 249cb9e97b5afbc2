package io.pagewise.cli;

import java.io.PrintStream;
import java.text.MessageFormat;
import java.util.ResourceBundle;

/**
 * What the command line's loggers share: a message at or above a threshold (INFO, or DEBUG with {@code -v}) is
 * formatted and handed to {@link #print}, which writes it to err after the prefix; the rest is dropped.
 */
abstract class ThresholdLogger implements System.Logger {
    final String prefix;
    final PrintStream err;
    private final Level threshold;

    ThresholdLogger(String prefix, PrintStream err, boolean verbose) {
        this.prefix = prefix;
        this.err = err;
        this.threshold = verbose ? Level.DEBUG : Level.INFO;
    }

    /** Prints one message that passed the threshold; thrown is null when none was logged with it. */
    abstract void print(Level level, String message, Throwable thrown);

    @Override
    public final boolean isLoggable(Level level) {
        return level != Level.OFF && level.getSeverity() >= threshold.getSeverity();
    }

    @Override
    public final void log(Level level, ResourceBundle bundle, String message, Throwable thrown) {
        if (isLoggable(level)) print(level, message, thrown);
    }

    @Override
    public final void log(Level level, ResourceBundle bundle, String format, Object... params) {
        if (!isLoggable(level)) return;
        print(level, params == null || params.length == 0 ? format : MessageFormat.format(format, params), null);
    }
}

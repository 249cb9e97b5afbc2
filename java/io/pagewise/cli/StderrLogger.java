package io.pagewise.cli;

import java.io.PrintStream;
import java.text.MessageFormat;
import java.util.ResourceBundle;

/**
 * The command line's sink for a library logger: each message at or above a level as one line on stderr, after a
 * prefix such as {@code "pagewise serve: "}, with no timestamp, level or stack trace, as the commands have always
 * printed them. {@code -v} lowers the level from INFO to DEBUG.
 */
final class StderrLogger implements System.Logger {
    private final String prefix;
    private final PrintStream err;
    private final Level threshold;

    StderrLogger(String prefix, PrintStream err, boolean verbose) {
        this.prefix = prefix;
        this.err = err;
        this.threshold = verbose ? Level.DEBUG : Level.INFO;
    }

    @Override
    public String getName() {
        return "pagewise command line";
    }

    @Override
    public boolean isLoggable(Level level) {
        return level != Level.OFF && level.getSeverity() >= threshold.getSeverity();
    }

    @Override
    public void log(Level level, ResourceBundle bundle, String message, Throwable thrown) {
        if (isLoggable(level)) err.println(prefix + message);
    }

    @Override
    public void log(Level level, ResourceBundle bundle, String format, Object... params) {
        if (!isLoggable(level)) return;
        err.println(prefix + (params == null || params.length == 0 ? format : MessageFormat.format(format, params)));
    }
}

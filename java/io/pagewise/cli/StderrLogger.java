package io.pagewise.cli;

import java.io.PrintStream;

/**
 * The command line's sink for a library logger: each message at or above a level as one line on stderr, after a
 * prefix such as {@code "pagewise serve: "}, with no timestamp, level or stack trace, as the commands have always
 * printed them. {@code -v} lowers the level from INFO to DEBUG.
 */
final class StderrLogger extends ThresholdLogger {
    StderrLogger(String prefix, PrintStream err, boolean verbose) {
        super(prefix, err, verbose);
    }

    @Override
    public String getName() {
        return "pagewise command line";
    }

    @Override
    void print(Level level, String message, Throwable thrown) {
        err.println(prefix + message);
    }
}

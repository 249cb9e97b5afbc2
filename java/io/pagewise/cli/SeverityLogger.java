package io.pagewise.cli;

import java.io.PrintStream;

/**
 * {@code --log=stderr} under a service manager: each message as a line on stderr that starts with its syslog
 * severity, {@code <3>} error, {@code <4>} warning, {@code <6>} info, {@code <7>} debug, which journald and
 * systemd read from a service's stderr (sd-daemon(3)) and which {@code journalctl -p warning} then filters on. A
 * message of several lines becomes several lines, each with the severity, so that none is read as info.
 */
final class SeverityLogger extends ThresholdLogger {
    SeverityLogger(String prefix, PrintStream err, boolean verbose) {
        super(prefix, err, verbose);
    }

    /** {@return the syslog severity of a level}: ERROR 3, WARNING 4, INFO 6, DEBUG and TRACE 7 */
    static int severity(Level level) {
        switch (level) {
            case ERROR: return 3;
            case WARNING: return 4;
            case INFO: return 6;
            default: return 7;
        }
    }

    @Override
    public String getName() {
        return "pagewise command line, syslog severities";
    }

    /** Each line of the message with the level's severity, and thrown after it unless the message names it. */
    @Override
    void print(Level level, String message, Throwable thrown) {
        String text = message + (thrown != null && message.indexOf(String.valueOf(thrown)) < 0 ? ": " + thrown : "");
        String tag = "<" + severity(level) + ">";
        StringBuilder lines = new StringBuilder();
        for (String line : text.split("\n", -1)) lines.append(tag).append(prefix).append(line).append('\n');
        synchronized (err) {
            err.print(lines);
            err.flush();
        }
    }
}

package io.pagewise.testing;

import java.text.MessageFormat;
import java.util.List;
import java.util.ResourceBundle;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;

/**
 * A {@link System.Logger} for one server under test: keeps every message at or above a level, with its level, and
 * echoes it to stderr after a prefix, so a failing test shows what the server said.
 */
public final class RecordingLogger implements System.Logger {
    /** One logged message. */
    public record Entry(Level level, String message, Throwable thrown) {}

    private final String echoPrefix;
    private final Level threshold;
    private final List<Entry> entries = new CopyOnWriteArrayList<>();

    /**
     * @param echoPrefix put before each message echoed to stderr, or null for no echo
     * @param threshold  the lowest level kept (INFO leaves out the per-request DEBUG lines)
     */
    public RecordingLogger(String echoPrefix, Level threshold) {
        this.echoPrefix = echoPrefix;
        this.threshold = threshold;
    }

    /** {@return everything logged so far, in order} */
    public List<Entry> entries() {
        return List.copyOf(entries);
    }

    /** {@return the messages logged at exactly this level that contain text} */
    public List<String> messages(Level level, String text) {
        return entries.stream().filter(e -> e.level() == level && e.message().contains(text)).map(Entry::message)
                .collect(Collectors.toList());
    }

    /** {@return how many messages at any level contain text} */
    public long count(String text) {
        return entries.stream().filter(e -> e.message().contains(text)).count();
    }

    @Override
    public String getName() {
        return "recording";
    }

    @Override
    public boolean isLoggable(Level level) {
        return level != Level.OFF && level.getSeverity() >= threshold.getSeverity();
    }

    @Override
    public void log(Level level, ResourceBundle bundle, String message, Throwable thrown) {
        if (isLoggable(level)) record(new Entry(level, message, thrown));
    }

    @Override
    public void log(Level level, ResourceBundle bundle, String format, Object... params) {
        if (!isLoggable(level)) return;
        record(new Entry(level, params == null || params.length == 0 ? format : MessageFormat.format(format, params), null));
    }

    private void record(Entry entry) {
        entries.add(entry);
        if (echoPrefix != null) System.err.println(echoPrefix + entry.level() + " " + entry.message());
    }
}

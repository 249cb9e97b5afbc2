package example.consumer;

import java.text.MessageFormat;
import java.util.List;
import java.util.ResourceBundle;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * This application's own logging, as a {@link System.LoggerFinder} that module-info declares: it keeps every message
 * of a logger named {@code io.pagewise...}, at every level, so that {@link Main} can check that the library's
 * messages arrive here; other loggers print WARNING and above on stderr.
 */
public final class CollectedLog extends System.LoggerFinder {
    /** One message, with the logger's name and the module that asked for the logger. */
    record Entry(String logger, Module caller, System.Logger.Level level, String message) {}

    private static final List<Entry> ENTRIES = new CopyOnWriteArrayList<>();

    /** Made by the JDK's ServiceLoader. */
    public CollectedLog() {}

    /** {@return the messages kept so far} */
    static List<Entry> entries() {
        return List.copyOf(ENTRIES);
    }

    @Override
    public System.Logger getLogger(String name, Module module) {
        boolean kept = name.startsWith("io.pagewise");
        return new System.Logger() {
            @Override
            public String getName() {
                return name;
            }

            @Override
            public boolean isLoggable(Level level) {
                return level != Level.OFF && (kept || level.getSeverity() >= Level.WARNING.getSeverity());
            }

            @Override
            public void log(Level level, ResourceBundle bundle, String message, Throwable thrown) {
                if (isLoggable(level)) take(level, message);
            }

            @Override
            public void log(Level level, ResourceBundle bundle, String format, Object... params) {
                if (!isLoggable(level)) return;
                take(level, params == null || params.length == 0 ? format : MessageFormat.format(format, params));
            }

            private void take(Level level, String message) {
                if (kept) {
                    ENTRIES.add(new Entry(name, module, level, message));
                } else {
                    System.err.println(name + " " + level + ": " + message);
                }
            }
        };
    }
}

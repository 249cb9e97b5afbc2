package io.pagewise.nbd.server.protocol;

import java.lang.System.Logger.Level;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/** Lets a message through at most once a second and counts those held back, so that a flood cannot flood the log. */
public final class LogThrottle {
    /** What the held-back messages were about, for "; N more ... since the last such message". */
    private final String heldBackAs;
    private long nextNanos = System.nanoTime();
    private int heldBack;
    /** The level of the messages held back since the last one let through. */
    private Level heldBackLevel = Level.WARNING;

    public LogThrottle(String heldBackAs) {
        this.heldBackAs = heldBackAs;
    }

    /** Logs the message at WARNING, with how many were held back since the last one, unless it is held back. */
    public void warn(System.Logger log, Supplier<String> message) {
        log(log, Level.WARNING, message);
    }

    /** Logs the message at level, with how many were held back since the last one, unless it is held back. */
    public void log(System.Logger log, Level level, Supplier<String> message) {
        if (!log.isLoggable(level)) return;
        int count;
        synchronized (this) {
            long now = System.nanoTime();
            if (now - nextNanos < 0) {
                heldBack++;
                heldBackLevel = level;
                return;
            }
            nextNanos = now + TimeUnit.SECONDS.toNanos(1);
            count = heldBack;
            heldBack = 0;
        }
        log.log(level, message.get()
                + (count > 0 ? "; " + count + " more " + heldBackAs + " since the last such message" : ""));
    }

    /**
     * Logs how many messages were held back since the last one let through, if any: at stop, where no later message
     * would carry the count.
     */
    public void reportHeldBack(System.Logger log) {
        int count;
        Level level;
        synchronized (this) {
            count = heldBack;
            level = heldBackLevel;
            heldBack = 0;
        }
        if (count > 0) log.log(level, count + " more " + heldBackAs + " since the last such message, not logged one by one");
    }
}

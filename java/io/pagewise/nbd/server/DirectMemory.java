package io.pagewise.nbd.server;

import java.lang.System.Logger.Level;
import java.lang.management.ManagementFactory;
import java.util.List;
import java.util.Locale;

/**
 * The JVM's limit on direct buffer memory, where request payloads live: {@code -XX:MaxDirectMemorySize}, or the heap's
 * maximum when it is not set (HotSpot's default). An in-flight budget above what fits made allocations fail with
 * OutOfMemoryError in the middle of receiving a request (an outside review: {@code -Xmx64m} and the default 64 MiB
 * budget).
 */
final class DirectMemory {
    private DirectMemory() {}

    /** {@return the limit in bytes} */
    static long limit() {
        long set = -1;
        try {
            List<String> arguments = ManagementFactory.getRuntimeMXBean().getInputArguments();
            for (String argument : arguments) {
                if (argument.startsWith("-XX:MaxDirectMemorySize=")) set = parse(argument.substring(argument.indexOf('=') + 1));
            }
        } catch (RuntimeException | LinkageError e) {
            set = -1; // no management here: the default applies
        }
        return set > 0 ? set : Runtime.getRuntime().maxMemory();
    }

    /**
     * The in-flight budget, at most half the JVM's direct memory limit (the payload buffers' alignment, the free list
     * and other direct buffers need the rest), and never below the smallest budget; a lowered one is logged.
     */
    static long fitBudget(long requested, long directLimit, System.Logger log) {
        long fits = Math.max(NbdServer.Builder.MIN_INFLIGHT_BYTES, directLimit / 2);
        if (requested <= fits) return requested;
        log.log(Level.WARNING, "in-flight bytes lowered to " + fits + " from " + requested + " (--max-inflight-bytes):"
                + " the JVM may hold at most " + directLimit + " bytes of direct memory (-XX:MaxDirectMemorySize, else"
                + " the heap's -Xmx), and request payloads live there");
        return fits;
    }

    /** A HotSpot size: digits with an optional k, m, g or t; -1 when it is none. */
    static long parse(String size) {
        String s = size.trim().toLowerCase(Locale.ROOT);
        if (s.isEmpty()) return -1;
        int shift = switch (s.charAt(s.length() - 1)) {
            case 'k' -> 10;
            case 'm' -> 20;
            case 'g' -> 30;
            case 't' -> 40;
            default -> 0;
        };
        try {
            long digits = Long.parseLong(shift == 0 ? s : s.substring(0, s.length() - 1));
            return digits < 0 || digits > Long.MAX_VALUE >> shift ? -1 : digits << shift;
        } catch (NumberFormatException e) {
            return -1;
        }
    }
}

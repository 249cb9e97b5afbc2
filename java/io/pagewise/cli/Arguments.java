package io.pagewise.cli;

import io.pagewise.CacheMode;
import java.util.List;
import java.util.Locale;
import java.util.function.Predicate;

/** Parsers for option values shared by the commands; mistakes are {@link UsageException}s naming the option. */
final class Arguments {
    private Arguments() {}

    /** An option split into name and value; next is the index of the last argument it used. */
    record Option(String name, String value, int next) {}

    /** Splits args[i] as "--name=value", or "--name value" when takesValue says the option has a value. */
    static Option option(List<String> args, int i, Predicate<String> takesValue) throws UsageException {
        String arg = args.get(i);
        int eq = arg.indexOf('=');
        if (eq > 0) return new Option(arg.substring(0, eq), arg.substring(eq + 1), i);
        if (!takesValue.test(arg)) throw new UsageException("unknown option '" + arg + "'");
        if (i + 1 >= args.size()) throw new UsageException("option " + arg + " needs a value");
        return new Option(arg, args.get(i + 1), i + 1);
    }

    static CacheMode cacheMode(String name, String value) throws UsageException {
        String mode = value.toLowerCase(Locale.ROOT);
        if (mode.equals("none")) {
            throw new UsageException(name + "=none is ambiguous (qemu-nbd means O_DIRECT, nbdkit means evicting): "
                    + "use " + name + "=direct or " + name + "=evict");
        }
        for (CacheMode m : CacheMode.values()) {
            if (m.name().toLowerCase(Locale.ROOT).equals(mode)) return m;
        }
        throw new UsageException(name + "=" + value + ": expected " + cacheModeNames());
    }

    /** "writeback, writethrough, ... or dontcache": every mode, in declaration order. */
    static String cacheModeNames() {
        CacheMode[] modes = CacheMode.values();
        StringBuilder names = new StringBuilder();
        for (int i = 0; i < modes.length; i++) {
            if (i > 0) names.append(i == modes.length - 1 ? " or " : ", ");
            names.append(modes[i].name().toLowerCase(Locale.ROOT));
        }
        return names.toString();
    }

    static int integer(String name, String value, int min, int max) throws UsageException {
        try {
            int n = Integer.parseInt(value);
            if (n >= min && n <= max) return n;
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new UsageException(name + "=" + value + ": expected a whole number from " + min + " to " + max);
    }

    /** Parses 4096, 64K, 32M, 1G, 2T (binary multiples; an optional trailing B or iB is allowed). */
    static long size(String name, String value) throws UsageException {
        String text = value.trim().toUpperCase(Locale.ROOT);
        if (text.endsWith("IB")) text = text.substring(0, text.length() - 2);
        else if (text.endsWith("B") && text.length() > 1 && !Character.isDigit(text.charAt(text.length() - 2))) {
            text = text.substring(0, text.length() - 1);
        }
        int shift = 0;
        if (!text.isEmpty()) {
            int unit = "KMGTP".indexOf(text.charAt(text.length() - 1));
            if (unit >= 0) {
                shift = 10 * (unit + 1);
                text = text.substring(0, text.length() - 1);
            }
        }
        try {
            long n = Long.parseLong(text);
            if (n >= 0 && n <= (Long.MAX_VALUE >> shift)) return n << shift;
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new UsageException(name + "=" + value + ": expected a size such as 4096, 64K, 512M or 1G");
    }
}

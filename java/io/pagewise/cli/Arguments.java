package io.pagewise.cli;

import io.pagewise.CacheMode;
import io.pagewise.copy.BlockHash;
import io.pagewise.filters.Filters;
import java.util.List;
import java.util.Locale;

/** Parsers for option values shared by the commands; mistakes are {@link UsageException}s naming the option. */
final class Arguments {
    private Arguments() {}

    /** {@return an option and its value as the user gave them, for messages: --threads=0, or -C 0} */
    static String shown(String name, String value) {
        return name + (name.startsWith("--") ? "=" : " ") + value;
    }

    static CacheMode cacheMode(String name, String value) throws UsageException {
        String mode = value.toLowerCase(Locale.ROOT);
        if (mode.equals("none")) {
            throw new UsageException(shown(name, "none") + " is ambiguous (qemu-nbd means O_DIRECT, nbdkit means evicting): "
                    + "use " + shown(name, "direct") + " or " + shown(name, "evict"));
        }
        for (CacheMode m : CacheMode.values()) {
            if (m.name().toLowerCase(Locale.ROOT).equals(mode)) return m;
        }
        throw new UsageException(shown(name, value) + ": expected " + cacheModeNames());
    }

    /**
     * serve's --cache, which also takes qemu-nbd's {@code none} with qemu-nbd's meaning, O_DIRECT, saying so in a notice:
     * nbdkit's file plugin means evicting by the same word.
     */
    static CacheMode serveCacheMode(String name, String value, List<String> notices) throws UsageException {
        if (!value.toLowerCase(Locale.ROOT).equals("none")) return cacheMode(name, value);
        notices.add(shown(name, value) + " is qemu-nbd's O_DIRECT, served as " + shown(name, "direct")
                + " (nbdkit's file plugin cache=none, evicting behind each read, is " + shown(name, "evict") + ")");
        return CacheMode.DIRECT;
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

    /** "writeback (default), writethrough, ..., dontcache": every mode, in declaration order, the default marked. */
    static String cacheModeChoices(CacheMode byDefault) {
        StringBuilder names = new StringBuilder();
        for (CacheMode mode : CacheMode.values()) {
            if (names.length() > 0) names.append(", ");
            names.append(mode.name().toLowerCase(Locale.ROOT));
            if (mode == byDefault) names.append(" (default)");
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
        throw new UsageException(shown(name, value) + ": expected a whole number from " + min + " to " + max);
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
        throw new UsageException(shown(name, value) + ": expected a size such as 4096, 64K, 512M or 1G");
    }

    /**
     * Checks a {@code --filter} value as far as can be done before the device exists: the form
     * {@code NAME[:KEY=VALUE,…]} and a known name. Its parameters are checked when it is applied.
     */
    static String filter(String name, String value) throws UsageException {
        Filters.Spec spec;
        try {
            spec = Filters.Spec.parse(value);
        } catch (IllegalArgumentException e) {
            throw new UsageException(shown(name, value) + ": " + e.getMessage());
        }
        if (!Filters.names().contains(spec.name())) {
            throw new UsageException(shown(name, value) + ": unknown filter '" + spec.name() + "': expected one of "
                    + String.join(", ", Filters.names()));
        }
        return value;
    }

    /** A digest name for the blkhash construction over blksum's default 64 KiB blocks. */
    static BlockHash blockHash(String name, String value) throws UsageException {
        return blockHash(name, value, BlockHash.DEFAULT_BLOCK_SIZE);
    }

    static BlockHash blockHash(String name, String value, int blockSize) throws UsageException {
        try {
            return new BlockHash(value, blockSize);
        } catch (IllegalArgumentException e) {
            throw new UsageException(shown(name, value) + ": " + e.getMessage());
        }
    }
}

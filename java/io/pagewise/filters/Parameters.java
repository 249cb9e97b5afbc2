package io.pagewise.filters;

import io.pagewise.device.DeviceException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The parameters of one {@link Filters.Spec}, read by the filter that takes them: each reader names the filter, the
 * key and the value in its IllegalArgumentException, and {@link #checkKnown} refuses the keys no reader asked for.
 */
final class Parameters {
    private final Filters.Spec spec;

    Parameters(Filters.Spec spec) {
        this.spec = spec;
    }

    /** Refuses any key outside known, naming the filter, the key and what the filter takes. */
    void checkKnown(String... known) {
        Set<String> allowed = Set.of(known);
        for (Map.Entry<String, String> e : spec.parameters().entrySet()) {
            if (!allowed.contains(e.getKey())) {
                throw new IllegalArgumentException("filter " + spec.name() + ": unknown parameter " + e.getKey() + "="
                        + e.getValue() + (known.length == 0 ? " (it takes none)"
                                : " (it takes " + String.join(", ", known) + ")"));
            }
        }
    }

    boolean has(String key) { return spec.parameters().containsKey(key); }

    String text(String key, String otherwise) { return spec.parameters().getOrDefault(key, otherwise); }

    IllegalArgumentException bad(String key, String why) {
        return new IllegalArgumentException("filter " + spec.name() + ": " + key + "=" + spec.parameters().get(key)
                + ": " + why);
    }

    /** A file path, not empty. */
    Path path(String key) {
        String value = spec.parameters().get(key);
        if (value == null) return null;
        if (value.isBlank()) throw bad(key, "expected a file name");
        return Path.of(value);
    }

    /** A byte count: digits with an optional K, M, G or T suffix (powers of 1024), within min..max. */
    long bytes(String key, long otherwise, long min, long max) {
        String value = spec.parameters().get(key);
        if (value == null) return otherwise;
        String digits = value.trim().toUpperCase(Locale.ROOT);
        int shift = 0;
        if (digits.endsWith("B")) digits = digits.substring(0, digits.length() - 1);
        if (digits.endsWith("I")) digits = digits.substring(0, digits.length() - 1);
        if (!digits.isEmpty()) {
            int unit = "KMGT".indexOf(digits.charAt(digits.length() - 1));
            if (unit >= 0) {
                shift = 10 * (unit + 1);
                digits = digits.substring(0, digits.length() - 1);
            }
        }
        long n;
        try {
            n = Long.parseLong(digits);
        } catch (NumberFormatException e) {
            throw bad(key, "expected a byte count such as 4096, 64K, 10M or 1G");
        }
        if (n < 0 || (shift > 0 && n > (Long.MAX_VALUE >> shift))) throw bad(key, "out of range");
        n <<= shift;
        if (n < min || n > max) throw bad(key, "must be from " + min + " to " + max + " bytes");
        return n;
    }

    /**
     * A bandwidth in bits per second, as nbdkit's rate filter reads its {@code rate=}: digits with an optional K, M,
     * G, T, P or E suffix (powers of 1024, either case), so 8M is 8 Mibit/s. A byte unit ({@code 10MiB},
     * {@code 10MB/s}, {@code 10B}) is refused, naming the value to write instead: read as bits it would be an eighth
     * of the rate meant.
     *
     * @return the bandwidth in bytes per second, an eighth of the bits rounded down; otherwise when the key is absent
     */
    long bitRate(String key, long otherwise) {
        String value = spec.parameters().get(key);
        if (value == null) return otherwise;
        String text = value.trim().toUpperCase(Locale.ROOT);
        boolean perSecond = text.endsWith("/S");
        String unit = perSecond ? text.substring(0, text.length() - 2) : text;
        if (unit.endsWith("B")) {
            String number = unit.substring(0, unit.length() - 1);
            if (number.endsWith("I")) number = number.substring(0, number.length() - 1);
            long[] scaled = scaled(number);
            String instead = "";
            if (scaled != null && scaled[0] >= 0 && scaled[0] <= (Long.MAX_VALUE >> scaled[1]) / 8) {
                String suffix = scaled[1] == 0 ? "" : number.substring(number.length() - 1);
                instead = ": for " + value.trim() + (perSecond ? "" : "/s") + " write " + key + "=" + scaled[0] * 8
                        + suffix;
            }
            throw bad(key, "counts bits per second, as nbdkit's rate filter does, and takes no byte unit" + instead);
        }
        long[] scaled = scaled(text);
        if (scaled == null) {
            throw bad(key, "expected bits per second, as nbdkit's rate filter takes them, such as 800K or 80M"
                    + " (80 Mibit/s: 10 MiB/s)");
        }
        if (scaled[0] < 0 || scaled[0] > (Long.MAX_VALUE >> scaled[1])) throw bad(key, "out of range");
        long bits = scaled[0] << scaled[1];
        if (bits < 8) throw bad(key, "must be 8 bits per second (1 byte) or more");
        return bits / 8;
    }

    /** DIGITS[K|M|G|T|P|E] as {number, shift}, or null when it is not of that form. */
    private static long[] scaled(String text) {
        int shift = 0;
        String digits = text;
        if (!digits.isEmpty()) {
            int unit = "KMGTPE".indexOf(digits.charAt(digits.length() - 1));
            if (unit >= 0) {
                shift = 10 * (unit + 1);
                digits = digits.substring(0, digits.length() - 1);
            }
        }
        if (digits.isEmpty() || !digits.chars().allMatch(c -> c >= '0' && c <= '9')) return null;
        try {
            return new long[] {Long.parseLong(digits), shift};
        } catch (NumberFormatException e) {
            return new long[] {-1, shift};
        }
    }

    /** A byte count that is a power of two. */
    int powerOfTwo(String key, int otherwise, int min, int max) {
        int n = (int) bytes(key, otherwise, min, max);
        if (Integer.bitCount(n) != 1) throw bad(key, "must be a power of two");
        return n;
    }

    /** A share from 0 to 1: a fraction (0.1) or a percentage (10%). */
    double share(String key, double otherwise) {
        String value = spec.parameters().get(key);
        if (value == null) return otherwise;
        String v = value.trim();
        boolean percent = v.endsWith("%");
        double d;
        try {
            d = Double.parseDouble(percent ? v.substring(0, v.length() - 1) : v);
        } catch (NumberFormatException e) {
            throw bad(key, "expected a share such as 0.1 or 10%");
        }
        if (percent) d /= 100;
        if (!(d >= 0 && d <= 1)) throw bad(key, "must be from 0 to 1 (0% to 100%)");
        return d;
    }

    /** A duration: a number with ns, us, ms or s (seconds without a unit), not negative. */
    Duration duration(String key, Duration otherwise) {
        String value = spec.parameters().get(key);
        return value == null ? otherwise : duration(key, value);
    }

    Duration duration(String key, String value) {
        String v = value.trim().toLowerCase(Locale.ROOT);
        long scale = 1_000_000_000L;
        for (String[] unit : new String[][] {{"ns", "1"}, {"us", "1000"}, {"ms", "1000000"}, {"s", "1000000000"}}) {
            if (v.endsWith(unit[0])) {
                scale = Long.parseLong(unit[1]);
                v = v.substring(0, v.length() - unit[0].length());
                break;
            }
        }
        double d;
        try {
            d = Double.parseDouble(v);
        } catch (NumberFormatException e) {
            throw bad(key, "expected a duration such as 10ms, 0.5s or 2");
        }
        if (!(d >= 0) || d * scale > Long.MAX_VALUE / 2) throw bad(key, "must be a duration of 0 or more");
        return Duration.ofNanos((long) (d * scale));
    }

    /** A number of seconds or more than 0 (a double). */
    double positive(String key, double otherwise) {
        String value = spec.parameters().get(key);
        if (value == null) return otherwise;
        double d;
        try {
            d = Double.parseDouble(value.trim());
        } catch (NumberFormatException e) {
            throw bad(key, "expected a number");
        }
        if (!(d > 0) || Double.isInfinite(d)) throw bad(key, "must be more than 0");
        return d;
    }

    long longValue(String key, long otherwise) {
        String value = spec.parameters().get(key);
        if (value == null) return otherwise;
        try {
            return Long.parseLong(value.trim());
        } catch (NumberFormatException e) {
            throw bad(key, "expected a whole number");
        }
    }

    boolean bool(String key, boolean otherwise) {
        String value = spec.parameters().get(key);
        if (value == null) return otherwise;
        switch (value.trim().toLowerCase(Locale.ROOT)) {
            case "true": case "yes": case "on": case "1": return true;
            case "false": case "no": case "off": case "0": return false;
            default: throw bad(key, "expected true or false");
        }
    }

    /** Comma-separated errno names (EIO, ENOSPC, …), each one NBD can carry. */
    int[] errnos(String key, int otherwise) {
        String value = spec.parameters().get(key);
        if (value == null) return new int[] {otherwise};
        List<Integer> errors = new ArrayList<>();
        for (String name : value.split(",")) {
            int errno = errnoNamed(name.trim().toUpperCase(Locale.ROOT));
            if (errno < 0) throw bad(key, "'" + name + "' is not one of " + String.join(", ", ERRNO_NAMES));
            errors.add(errno);
        }
        return errors.stream().mapToInt(Integer::intValue).toArray();
    }

    static final List<String> ERRNO_NAMES = List.of("EPERM", "EIO", "ENOMEM", "EINVAL", "ENOSPC", "EOVERFLOW",
            "ENOTSUP", "ESHUTDOWN");
    private static final int[] ERRNO_VALUES = {DeviceException.EPERM, DeviceException.EIO, DeviceException.ENOMEM,
            DeviceException.EINVAL, DeviceException.ENOSPC, DeviceException.EOVERFLOW, DeviceException.ENOTSUP,
            DeviceException.ESHUTDOWN};

    private static int errnoNamed(String name) {
        if (name.equals("EOPNOTSUPP")) return DeviceException.ENOTSUP;
        int i = ERRNO_NAMES.indexOf(name);
        return i < 0 ? -1 : ERRNO_VALUES[i];
    }

    /** Comma-separated operation names: read, write, zero, trim, flush, extents, cache. */
    List<FaultFilter.Operation> operations(String key) {
        String value = spec.parameters().get(key);
        if (value == null) return List.of(FaultFilter.Operation.values());
        List<FaultFilter.Operation> ops = new ArrayList<>();
        for (String name : value.split(",")) {
            FaultFilter.Operation op = operationNamed(name.trim().toLowerCase(Locale.ROOT));
            if (op == null) throw bad(key, "'" + name + "' is not one of " + String.join(", ", OPERATION_NAMES));
            ops.add(op);
        }
        return ops;
    }

    /** The names the error and delay filters give operations, as nbdkit's error filter does (pread → read). */
    static final List<String> OPERATION_NAMES = List.of("read", "write", "zero", "trim", "flush", "extents", "cache");

    static FaultFilter.Operation operationNamed(String name) {
        int i = OPERATION_NAMES.indexOf(name);
        return i < 0 ? null : FaultFilter.Operation.values()[i];
    }
}

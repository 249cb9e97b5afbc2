package io.pagewise.filters;

import io.pagewise.device.BlockDevice;
import io.pagewise.device.DeviceException;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Filters named by text, as the command line's {@code --filter=NAME[:KEY=VALUE,…]} gives them: {@code cow},
 * {@code error}, {@code delay}, {@code rate}, {@code readonly}, {@code stats}, {@code blocksize}, {@code noextents}
 * and {@code nozero}, each with the
 * parameters docs/FILTERS.md lists. An unknown key, or a value a filter cannot use, is an IllegalArgumentException
 * that names the filter, the key and the value.
 *
 * <p>{@link #apply} stacks them as nbdkit does: the first filter named is the one nearest the client, so a request
 * passes the filters in the order given and then reaches the device.
 */
public final class Filters {
    private Filters() {}

    /**
     * One parsed {@code NAME[:KEY=VALUE,…]}. A piece without {@code =} continues the value before it, so that a value
     * may hold commas ({@code error:ops=read,write,rate=0.1}).
     *
     * @param name       the filter's name, lower case
     * @param parameters its parameters in the order given
     */
    public record Spec(String name, Map<String, String> parameters) {
        /**
         * {@return the parsed spec}
         *
         * @param text {@code NAME[:KEY=VALUE,…]}
         * @throws IllegalArgumentException when the text is not of that form; the message names what is wrong
         */
        public static Spec parse(String text) {
            int colon = text.indexOf(':');
            String name = (colon < 0 ? text : text.substring(0, colon)).trim().toLowerCase(Locale.ROOT);
            if (name.isEmpty()) throw new IllegalArgumentException("filter '" + text + "': no filter name");
            Map<String, String> parameters = new LinkedHashMap<>();
            if (colon >= 0) {
                String last = null;
                for (String piece : text.substring(colon + 1).split(",", -1)) {
                    int eq = piece.indexOf('=');
                    if (eq > 0) {
                        last = piece.substring(0, eq).trim().toLowerCase(Locale.ROOT);
                        if (parameters.containsKey(last)) {
                            throw new IllegalArgumentException("filter " + name + ": " + last + " given twice");
                        }
                        parameters.put(last, piece.substring(eq + 1));
                    } else if (last != null && !piece.isEmpty()) {
                        parameters.put(last, parameters.get(last) + "," + piece);
                    } else {
                        throw new IllegalArgumentException("filter " + name + ": '" + piece
                                + "' is not KEY=VALUE (expected " + name + ":KEY=VALUE,…)");
                    }
                }
            }
            return new Spec(name, Collections.unmodifiableMap(parameters));
        }
    }

    /** {@return the names {@link #apply} knows}, in the order the documentation lists them */
    public static List<String> names() {
        return List.of("cow", "error", "delay", "rate", "readonly", "stats", "blocksize", "noextents", "nozero");
    }

    /**
     * Wraps a device in the filters the specs name; the first spec ends up outermost (nearest the caller). Every
     * spec is checked before any filter is made, so a bad one opens nothing; when a filter then cannot open what it
     * needs (an overlay file), the filters made so far are not closed, and neither is the device.
     *
     * @param device the device to wrap
     * @param specs  {@code NAME[:KEY=VALUE,…]} each
     * @return the outermost filter, or device itself for no specs
     * @throws IllegalArgumentException when a spec names an unknown filter or a parameter it does not take, or a
     *                                  value it cannot use; the message names the filter and the parameter
     * @throws IOException              when a filter cannot open what it needs (an overlay file)
     */
    public static BlockDevice apply(BlockDevice device, List<String> specs) throws IOException {
        List<Maker> makers = new ArrayList<>();
        for (String text : specs) makers.add(prepare(Spec.parse(text)));
        BlockDevice result = device;
        for (int i = makers.size() - 1; i >= 0; i--) result = makers.get(i).wrap(result);
        return result;
    }

    /** A checked spec, ready to wrap a device. */
    private interface Maker {
        BlockDevice wrap(BlockDevice device) throws IOException;
    }

    private static Maker prepare(Spec spec) {
        Parameters p = new Parameters(spec);
        switch (spec.name()) {
            case "cow": {
                p.checkKnown("file", "blocksize");
                Path file = p.path("file");
                int blockSize = p.has("blocksize") ? p.powerOfTwo("blocksize", 0, 4096, 16 << 20)
                        : file == null ? CowFilter.DEFAULT_BLOCK_SIZE : 0;
                return d -> file == null ? CowFilter.temporary(d, blockSize) : CowFilter.open(d, file, blockSize);
            }
            case "error": {
                p.checkKnown("rate", "error", "ops", "seed");
                double rate = p.share("rate", 0);
                int[] errors = p.errnos("error", DeviceException.EIO);
                List<FaultFilter.Operation> ops = p.operations("ops");
                long seed = p.longValue("seed", System.nanoTime());
                return d -> {
                    FaultFilter.Builder b = FaultFilter.wrap(d).seed(seed);
                    for (FaultFilter.Operation op : ops) b.fail(op, rate, errors);
                    return b.build();
                };
            }
            case "delay":
                return delay(spec, p);
            case "rate": {
                p.checkKnown("rate", "connection-rate", "burstiness");
                long rate = p.bitRate("rate", 0);
                long connectionRate = p.bitRate("connection-rate", 0);
                double burstiness = p.positive("burstiness", RateFilter.DEFAULT_BURSTINESS);
                if (rate == 0 && connectionRate == 0) {
                    throw new IllegalArgumentException("filter rate: needs rate=BITS/s or connection-rate=BITS/s"
                            + " (as nbdkit's, such as rate=80M for 10 MiB/s)");
                }
                return d -> new RateFilter(d, rate, connectionRate, burstiness);
            }
            case "readonly":
                p.checkKnown();
                return ReadOnlyFilter::new;
            case "stats": {
                p.checkKnown("file", "append", "interval");
                Path file = p.path("file");
                boolean append = p.bool("append", false);
                Duration interval = p.duration("interval", Duration.ZERO);
                return d -> {
                    if (file != null) StatsFilter.checkWritable(file, append);
                    return new StatsFilter(d, file, append, interval);
                };
            }
            case "blocksize": {
                p.checkKnown("minblock", "maxdata", "maxlen");
                int minblock = p.powerOfTwo("minblock", 1, 1, 65536);
                int maxdata = (int) p.bytes("maxdata", BlockSizeFilter.DEFAULT_MAXDATA, 1, 1 << 30);
                long maxlen = p.bytes("maxlen", (1L << 32) - minblock, 1, Long.MAX_VALUE);
                if (maxdata % minblock != 0) throw p.bad("maxdata", "must be a multiple of minblock=" + minblock);
                if (maxlen % minblock != 0) throw p.bad("maxlen", "must be a multiple of minblock=" + minblock);
                return d -> new BlockSizeFilter(d, minblock, maxdata, maxlen);
            }
            case "noextents":
                p.checkKnown();
                return NoExtentsFilter::new;
            case "nozero": {
                p.checkKnown("mode");
                String mode = p.text("mode", "none");
                if (!mode.equals("none") && !mode.equals("emulate")) throw p.bad("mode", "expected none or emulate");
                NoZeroFilter.Mode chosen = mode.equals("none") ? NoZeroFilter.Mode.NONE : NoZeroFilter.Mode.EMULATE;
                return d -> new NoZeroFilter(d, chosen);
            }
            default:
                throw new IllegalArgumentException("unknown filter '" + spec.name() + "': expected one of "
                        + String.join(", ", names()));
        }
    }

    /** Keys: one per operation ({@code read=10ms}, {@code write=5ms-20ms}), all=, nbdkit's rdelay= and wdelay=. */
    private static Maker delay(Spec spec, Parameters p) {
        List<String> keys = new ArrayList<>(Parameters.OPERATION_NAMES);
        keys.addAll(List.of("all", "rdelay", "wdelay", "seed"));
        p.checkKnown(keys.toArray(new String[0]));
        Map<FaultFilter.Operation, Duration[]> delays = new EnumMap<>(FaultFilter.Operation.class);
        if (p.has("all")) {
            Duration[] range = range(p, "all");
            for (FaultFilter.Operation op : FaultFilter.Operation.values()) delays.put(op, range);
        }
        if (p.has("rdelay")) delays.put(FaultFilter.Operation.READ, range(p, "rdelay"));
        if (p.has("wdelay")) delays.put(FaultFilter.Operation.WRITE, range(p, "wdelay"));
        for (String name : Parameters.OPERATION_NAMES) {
            if (p.has(name)) delays.put(Parameters.operationNamed(name), range(p, name));
        }
        if (delays.isEmpty()) {
            throw new IllegalArgumentException("filter delay: needs a delay, such as read=10ms or all=1ms-5ms");
        }
        long seed = p.longValue("seed", System.nanoTime());
        return d -> {
            FaultFilter.Builder b = FaultFilter.wrap(d).seed(seed);
            delays.forEach((op, range) -> b.delay(op, range[0], range[1]));
            return b.build();
        };
    }

    /** DURATION, or MIN-MAX for a delay drawn uniformly between them. */
    private static Duration[] range(Parameters p, String key) {
        String value = p.text(key, "");
        int dash = value.indexOf('-', 1);
        Duration min = p.duration(key, dash < 0 ? value : value.substring(0, dash));
        Duration max = dash < 0 ? min : p.duration(key, value.substring(dash + 1));
        if (min.compareTo(max) > 0) throw p.bad(key, "the minimum is longer than the maximum");
        return new Duration[] {min, max};
    }
}

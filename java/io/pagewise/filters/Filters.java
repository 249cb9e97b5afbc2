package io.pagewise.filters;

import io.pagewise.device.BlockDevice;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Filters named by text, as the command line's {@code --filter=NAME[:KEY=VALUE,…]} gives them: {@code readonly}.
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
        return List.of("readonly");
    }

    /**
     * Wraps a device in the filters the specs name; the first spec ends up outermost (nearest the caller). On failure
     * the filters made so far are not closed, and neither is the device.
     *
     * @param device the device to wrap
     * @param specs  {@code NAME[:KEY=VALUE,…]} each
     * @return the outermost filter, or device itself for no specs
     * @throws IllegalArgumentException when a spec names an unknown filter or a parameter it does not take, or a
     *                                  value it cannot use; the message names the filter and the parameter
     * @throws IOException              when a filter cannot open what it needs (an overlay file)
     */
    public static BlockDevice apply(BlockDevice device, List<String> specs) throws IOException {
        List<Spec> parsed = new ArrayList<>();
        for (String text : specs) parsed.add(Spec.parse(text));
        BlockDevice result = device;
        for (int i = parsed.size() - 1; i >= 0; i--) result = wrap(result, parsed.get(i));
        return result;
    }

    private static BlockDevice wrap(BlockDevice device, Spec spec) throws IOException {
        switch (spec.name()) {
            case "readonly":
                noParameters(spec);
                return new ReadOnlyFilter(device);
            default:
                throw new IllegalArgumentException("unknown filter '" + spec.name() + "': expected one of "
                        + String.join(", ", names()));
        }
    }

    private static void noParameters(Spec spec) {
        if (!spec.parameters().isEmpty()) {
            throw new IllegalArgumentException("filter " + spec.name() + " takes no parameters, got "
                    + String.join(", ", spec.parameters().keySet()));
        }
    }
}

package io.pagewise.cli;

import java.util.ArrayList;
import java.util.List;

/**
 * One option of a command, declared once: its names, its value, its help line and what it does to the command's
 * options. {@link OptionTable} makes the usage text and the parsing from a list of them, and the docs test checks
 * the docs against the same list.
 *
 * @param <T> the command's options object, which {@link #action} fills in
 */
final class CliOption<T> {
    /** Whether the option takes a value. */
    enum Arity {
        /** A switch: {@code -r}, {@code --read-only}; a value given with {@code =} is an error. */
        NONE,
        /** {@code --name=VALUE}, {@code --name VALUE}, {@code -N VALUE} or {@code -NVALUE}. */
        REQUIRED,
        /** {@code --name} alone or {@code --name=VALUE}, never a separate argument (it would be taken as FILE). */
        OPTIONAL
    }

    /** Applies the option; mistakes in value are {@link UsageException}s naming the option as given. */
    @FunctionalInterface
    interface Action<T> {
        /**
         * @param target the command's options
         * @param name   the option as the user spelled it ({@code -C} or {@code --connections}), for messages
         * @param value  its value; null for a switch, and for an optional value that was not given
         */
        void apply(T target, String name, String value) throws UsageException;
    }

    private final List<String> shortNames = new ArrayList<>();
    private final List<String> longNames = new ArrayList<>();
    private final String valueName;
    private final Arity arity;
    private final String help;
    private final Action<T> action;
    /** The heading the usage prints above this option, or null to go on under the one before. */
    private String heading;

    private CliOption(String names, String valueName, Arity arity, String help, Action<T> action) {
        for (String name : names.split(",\\s*")) {
            if (name.matches("-[a-zA-Z]")) shortNames.add(name);
            else if (name.matches("--[a-z][a-z0-9-]+")) longNames.add(name);
            else throw new IllegalArgumentException("not an option name: '" + name + "'");
        }
        if (longNames.isEmpty()) throw new IllegalArgumentException(names + ": every option has a long name");
        this.valueName = valueName;
        this.arity = arity;
        this.help = help;
        this.action = action;
    }

    /** A switch such as {@code "-r, --read-only"}; the action gets a null value. */
    static <T> CliOption<T> flag(String names, String help, Action<T> action) {
        return new CliOption<>(names, null, Arity.NONE, help, action);
    }

    /** An option that needs a value, such as {@code "-C, --connections"} with value name {@code "N"}. */
    static <T> CliOption<T> value(String names, String valueName, String help, Action<T> action) {
        return new CliOption<>(names, valueName, Arity.REQUIRED, help, action);
    }

    /** An option whose value is optional and only given with {@code =}, such as {@code --stats[=FILE]}. */
    static <T> CliOption<T> optionalValue(String names, String valueName, String help, Action<T> action) {
        return new CliOption<>(names, valueName, Arity.OPTIONAL, help, action);
    }

    /**
     * Starts a group of options in the usage under heading, such as the spellings of other tools.
     *
     * @param heading the line printed above this option and the ones after it
     * @return this option
     */
    CliOption<T> under(String heading) {
        this.heading = heading;
        return this;
    }

    /** {@return the heading the usage prints above this option}, or null */
    String heading() { return heading; }

    List<String> shortNames() { return shortNames; }

    List<String> longNames() { return longNames; }

    /** {@return every name, short ones first} */
    List<String> names() {
        List<String> all = new ArrayList<>(shortNames);
        all.addAll(longNames);
        return all;
    }

    /** {@return the value's name such as {@code N}, or null for a switch} */
    String valueName() { return valueName; }

    Arity arity() { return arity; }

    String help() { return help; }

    void apply(T target, String name, String value) throws UsageException {
        action.apply(target, name, value);
    }

    /**
     * {@return how the usage text shows the option}: {@code -C, --connections=N}, {@code --stats[=FILE]},
     * {@code -r, --read-only}; the short names and the first long name, whose help names the other long names
     */
    String synopsis() {
        String value = arity == Arity.REQUIRED ? "=" + valueName : arity == Arity.OPTIONAL ? "[=" + valueName + "]" : "";
        List<String> shown = new ArrayList<>(shortNames);
        shown.add(longNames.get(0) + value);
        return String.join(", ", shown);
    }

    /** {@return the help as the usage shows it: with the other long names, such as {@code (also --pid-file)}} */
    String usageHelp() {
        if (longNames.size() == 1) return help;
        return help + " (also " + String.join(", ", longNames.subList(1, longNames.size())) + ")";
    }
}

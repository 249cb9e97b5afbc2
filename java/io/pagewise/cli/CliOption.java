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
     * {@code -r, --read-only}
     */
    String synopsis() {
        String value = arity == Arity.REQUIRED ? "=" + valueName : arity == Arity.OPTIONAL ? "[=" + valueName + "]" : "";
        List<String> shown = new ArrayList<>(shortNames);
        for (String name : longNames) shown.add(name + value);
        return String.join(", ", shown);
    }
}

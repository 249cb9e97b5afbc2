package io.pagewise.cli;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * A command's options, each declared once as a {@link CliOption}: the usage text is made from the table, and the
 * parser reads the command line with it, getopt-style: {@code --name=VALUE} or {@code --name VALUE}, {@code -N VALUE}
 * or {@code -NVALUE}, switches grouped as {@code -pv}, {@code --} before operands that start with {@code -}, and
 * {@code -} as an operand. {@code -h, --help} is in every table.
 *
 * @param <T> the command's options object
 */
final class OptionTable<T> {
    /** Takes what is not an option: FILE, SRC, DST. */
    @FunctionalInterface
    interface Operands<T> {
        /**
         * @param target   the command's options
         * @param operand  the argument
         * @param afterEnd true when it came after {@code --}, so that it is a name whatever it looks like
         */
        void accept(T target, String operand, boolean afterEnd) throws UsageException;
    }

    private static final int HELP_COLUMN = 28;
    private static final int WIDTH = 112;

    private final String synopsis;
    private final String description;
    private final List<CliOption<T>> options;
    private final Operands<T> operands;
    private final String unknownHint;

    /**
     * @param synopsis    the first line of the usage, such as {@code usage: pagewise copy [OPTIONS] SRC DST}
     * @param description the lines between the synopsis and the options (may be empty)
     * @param options     the command's options; {@code -h, --help} is added at the end
     * @param operands    where the other arguments go
     * @param unknownHint added to the message about an unknown option, or empty
     */
    OptionTable(String synopsis, String description, List<CliOption<T>> options, Operands<T> operands,
            String unknownHint) {
        this.synopsis = synopsis;
        this.description = description;
        List<CliOption<T>> all = new ArrayList<>(options);
        all.add(CliOption.flag("-h, --help", "show this help", (target, name, value) -> {}));
        this.options = Collections.unmodifiableList(all);
        this.operands = operands;
        this.unknownHint = unknownHint;
        List<String> seen = new ArrayList<>();
        for (CliOption<T> option : this.options) {
            for (String name : option.names()) {
                if (seen.contains(name)) throw new IllegalArgumentException(name + " is declared twice");
                seen.add(name);
            }
        }
    }

    /** {@return the options, {@code --help} last} */
    List<CliOption<T>> options() { return options; }

    /** {@return the synopsis line} */
    String synopsis() { return synopsis; }

    /** {@return the full help: synopsis, description and one line (or more, wrapped) per option} */
    String usage() {
        StringBuilder text = new StringBuilder(synopsis).append('\n');
        if (!description.isEmpty()) text.append('\n').append(description).append('\n');
        // A description that ends with a heading ("options:") runs straight into the options.
        if (!description.endsWith(":")) text.append('\n');
        for (CliOption<T> option : options) {
            String shown = "  " + option.synopsis();
            // The help starts at its column, or after two spaces when the names reach past it; it wraps at WIDTH.
            StringBuilder line = new StringBuilder(shown).append(" ".repeat(Math.max(2, HELP_COLUMN - shown.length())));
            boolean first = true;
            for (String word : option.help().split(" ")) {
                if (!first && line.length() + 1 + word.length() > WIDTH) {
                    text.append(line).append('\n');
                    line = new StringBuilder(" ".repeat(HELP_COLUMN - 1));
                }
                line.append(first ? "" : " ").append(word);
                first = false;
            }
            text.append(line).append('\n');
        }
        return text.substring(0, text.length() - 1);
    }

    /**
     * Reads a command line into target.
     *
     * @return false when {@code -h} or {@code --help} came before any mistake: the caller prints the usage
     * @throws UsageException naming the option or argument that is wrong
     */
    boolean parse(List<String> args, T target) throws UsageException {
        for (int i = 0; i < args.size(); i++) {
            String arg = args.get(i);
            if (arg.equals("--")) {
                for (String operand : args.subList(i + 1, args.size())) operands.accept(target, operand, true);
                return true;
            }
            if (!arg.startsWith("-") || arg.equals("-")) {
                operands.accept(target, arg, false);
            } else if (arg.startsWith("--")) {
                i = parseLong(args, i, target);
                if (i < 0) return false;
            } else {
                i = parseShort(args, i, target);
                if (i < 0) return false;
            }
        }
        return true;
    }

    /** {@return the index of the last argument used, or -1 for help} */
    private int parseLong(List<String> args, int i, T target) throws UsageException {
        String arg = args.get(i);
        int eq = arg.indexOf('=');
        String name = eq < 0 ? arg : arg.substring(0, eq);
        String value = eq < 0 ? null : arg.substring(eq + 1);
        CliOption<T> option = find(name);
        switch (option.arity()) {
            case NONE:
                if (value != null) throw new UsageException("option " + name + " takes no value");
                break;
            case REQUIRED:
                if (value == null) {
                    if (i + 1 >= args.size()) throw new UsageException("option " + name + " needs a value");
                    value = args.get(++i);
                }
                break;
            default:
                break;
        }
        return apply(option, target, name, value) ? i : -1;
    }

    /** A group of short options: switches, then at most one that takes the rest (or the next argument) as value. */
    private int parseShort(List<String> args, int i, T target) throws UsageException {
        String arg = args.get(i);
        for (int at = 1; at < arg.length(); at++) {
            String name = "-" + arg.charAt(at);
            CliOption<T> option = find(name, arg);
            // A short name never takes an optional value (-p is --progress, never --progress=FD).
            if (option.arity() != CliOption.Arity.REQUIRED) {
                if (!apply(option, target, name, null)) return -1;
                continue;
            }
            String value;
            if (at + 1 < arg.length()) {
                value = arg.substring(at + 1);
            } else if (i + 1 < args.size()) {
                value = args.get(++i);
            } else {
                throw new UsageException("option " + name + " needs a value");
            }
            return apply(option, target, name, value) ? i : -1;
        }
        return i;
    }

    private boolean apply(CliOption<T> option, T target, String name, String value) throws UsageException {
        if (option.longNames().contains("--help")) return false;
        option.apply(target, name, value);
        return true;
    }

    private CliOption<T> find(String name) throws UsageException {
        return find(name, name);
    }

    private CliOption<T> find(String name, String given) throws UsageException {
        for (CliOption<T> option : options) {
            if (option.names().contains(name)) return option;
        }
        throw new UsageException("unknown option '" + name + "'" + (given.equals(name) ? "" : " (in '" + given + "')")
                + unknownHint);
    }
}

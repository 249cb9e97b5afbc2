package io.pagewise.cli;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * A command's options, each declared once as a {@link CliOption}: the usage text is made from the table, and the
 * parser reads the command line with it, getopt-style: {@code --name=VALUE} or {@code --name VALUE}, {@code -N VALUE}
 * or {@code -NVALUE}, switches grouped as {@code -pv}, {@code --} before operands that start with {@code -}, and
 * {@code -} as an operand. {@code -h, --help} is in every table. An option may have several names (another tool's
 * spelling is one more name of the option it means); an unknown one is answered with the closest names.
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

    /**
     * Checks an operand that came as the argument right after an option that took no value from it: a switch, or an
     * option whose value is optional and was not given with {@code =}. The word may have been meant as the value.
     */
    @FunctionalInterface
    interface WordAfterOption<T> {
        /**
         * Called once the whole command line is read, the operands taken, for each such word in order.
         *
         * @param target the command's options
         * @param option the option the word came after
         * @param name   that option as the user spelled it
         * @param word   the operand
         */
        void check(T target, CliOption<T> option, String name, String word) throws UsageException;
    }

    private static final int WIDTH = 112;
    /** A synopsis longer than this has a line of its own, the help below it, so that it pushes no help to the right. */
    private static final int LONGEST_BESIDE_HELP = 30;

    private final String synopsis;
    private final String description;
    private final List<CliOption<T>> options;
    private final Operands<T> operands;
    private final String unknownHint;
    private WordAfterOption<T> wordAfterOption = (target, option, name, word) -> { };

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

    /**
     * Sets what checks an operand that came right after an option that took no value from it.
     *
     * @param check the command's rule
     * @return this table
     */
    OptionTable<T> checkingWordsAfterOptions(WordAfterOption<T> check) {
        this.wordAfterOption = check;
        return this;
    }

    /** {@return the options, {@code --help} last} */
    List<CliOption<T>> options() { return options; }

    /** {@return the synopsis line} */
    String synopsis() { return synopsis; }

    /** {@return the full help: synopsis, description and the options, their help in one column} */
    String usage() {
        StringBuilder text = new StringBuilder(synopsis).append('\n');
        if (!description.isEmpty()) text.append('\n').append(description).append('\n');
        // A description that ends with a heading ("options:") runs straight into the options.
        if (!description.endsWith(":")) text.append('\n');
        List<String[]> rows = new ArrayList<>();
        for (CliOption<T> option : options) rows.add(new String[] {option.synopsis(), option.usageHelp()});
        int column = helpColumn(rows);
        // --help goes with the command's own options, before any group under a heading.
        List<CliOption<T>> shown = new ArrayList<>(options);
        CliOption<T> help = shown.remove(shown.size() - 1);
        int firstHeading = 0;
        while (firstHeading < shown.size() && shown.get(firstHeading).heading() == null) firstHeading++;
        shown.add(firstHeading, help);
        for (CliOption<T> option : shown) {
            if (option.heading() != null) text.append('\n').append(option.heading()).append('\n');
            text.append(row(option.synopsis(), option.usageHelp(), column));
        }
        return text.substring(0, text.length() - 1);
    }

    /**
     * {@return rows of two columns, as the usage shows options}: each left cell indented by two spaces, each right
     * cell wrapped within the width, all starting in one column; a left cell too long for it has a line of its own
     *
     * @param rows each a left and a right cell
     */
    static String columns(List<String[]> rows) {
        int column = helpColumn(rows);
        StringBuilder text = new StringBuilder();
        for (String[] r : rows) text.append(row(r[0], r[1], column));
        return text.substring(0, Math.max(0, text.length() - 1));
    }

    /** The column of the help: two spaces after the longest left cell that is not too long to stand beside it. */
    private static int helpColumn(List<String[]> rows) {
        int longest = 0;
        for (String[] r : rows) {
            if (r[0].length() <= LONGEST_BESIDE_HELP) longest = Math.max(longest, r[0].length());
        }
        return 2 + longest + 2;
    }

    private static String row(String left, String help, int column) {
        StringBuilder text = new StringBuilder();
        StringBuilder line = new StringBuilder("  ").append(left);
        if (line.length() + 2 > column) {
            text.append(line).append('\n');
            line = new StringBuilder();
        }
        line.append(" ".repeat(column - line.length()));
        boolean first = true;
        for (String word : help.split(" ")) {
            if (!first && line.length() + 1 + word.length() > WIDTH) {
                text.append(line).append('\n');
                line = new StringBuilder(" ".repeat(column));
                first = true;
            }
            line.append(first ? "" : " ").append(word);
            first = false;
        }
        return text.append(line).append('\n').toString();
    }

    /**
     * Reads a command line into target.
     *
     * @return false when {@code -h} or {@code --help} came before any mistake: the caller prints the usage
     * @throws UsageException naming the option or argument that is wrong
     */
    boolean parse(List<String> args, T target) throws UsageException {
        // The option whose value the argument after it could have been: a switch, or --name of an optional value.
        Given<T> valueless = null;
        List<Given<T>> wordsAfterOptions = new ArrayList<>();
        for (int i = 0; i < args.size(); i++) {
            String arg = args.get(i);
            if (arg.equals("--")) {
                for (String operand : args.subList(i + 1, args.size())) operand(target, operand, true, wordsAfterOptions);
                break;
            }
            Given<T> after = valueless;
            valueless = null;
            if (!arg.startsWith("-") || arg.equals("-")) {
                if (after != null) wordsAfterOptions.add(new Given<>(after.option, after.name, arg));
                operand(target, arg, false, wordsAfterOptions);
            } else if (arg.startsWith("--")) {
                Given<T> given = parseLong(args, i, target);
                if (given == null) return false;
                i = given.index;
                if (given.tookNoArgument()) valueless = given;
            } else {
                Given<T> given = parseShort(args, i, target);
                if (given == null) return false;
                i = given.index;
                if (given.tookNoArgument()) valueless = given;
            }
        }
        for (Given<T> word : wordsAfterOptions) wordAfterOption.check(target, word.option, word.name, word.value);
        return true;
    }

    /**
     * An operand; when it is refused and an earlier word came right after an option whose value is optional, the
     * message asks whether that word was meant as the value.
     */
    private void operand(T target, String operand, boolean afterEnd, List<Given<T>> wordsAfterOptions)
            throws UsageException {
        try {
            operands.accept(target, operand, afterEnd);
        } catch (UsageException e) {
            for (Given<T> word : wordsAfterOptions) {
                if (word.option.arity() == CliOption.Arity.OPTIONAL) {
                    throw new UsageException(e.getMessage() + "; did you mean " + word.name + "=" + word.value + "? ("
                            + word.name + " takes its value only after =)");
                }
            }
            throw e;
        }
    }

    /**
     * An option as given on the command line.
     *
     * @param option the option
     * @param name   as the user spelled it
     * @param value  its value (null for none), or, in a word after an option, the word
     * @param index  the index of the last argument it used
     */
    private static final class Given<T> {
        final CliOption<T> option;
        final String name;
        final String value;
        final int index;
        final boolean separateValue;

        Given(CliOption<T> option, String name, String value) {
            this(option, name, value, -1, false);
        }

        Given(CliOption<T> option, String name, String value, int index, boolean separateValue) {
            this.option = option;
            this.name = name;
            this.value = value;
            this.index = index;
            this.separateValue = separateValue;
        }

        /** Whether the argument after it was left alone although it could have been a value: --stats, -r. */
        boolean tookNoArgument() {
            return value == null && !separateValue && option.arity() != CliOption.Arity.REQUIRED;
        }
    }

    /** {@return the option given and the index of the last argument it used}, or null for help */
    private Given<T> parseLong(List<String> args, int i, T target) throws UsageException {
        String arg = args.get(i);
        int eq = arg.indexOf('=');
        String name = eq < 0 ? arg : arg.substring(0, eq);
        String value = eq < 0 ? null : arg.substring(eq + 1);
        CliOption<T> option = find(name, name);
        boolean separate = false;
        switch (option.arity()) {
            case NONE:
                if (value != null) throw new UsageException("option " + name + " takes no value");
                break;
            case REQUIRED:
                if (value == null) {
                    if (i + 1 >= args.size()) throw new UsageException("option " + name + " needs a value");
                    value = args.get(++i);
                    separate = true;
                }
                break;
            default:
                break;
        }
        return apply(option, target, name, value) ? new Given<>(option, name, value, i, separate) : null;
    }

    /** A group of short options: switches, then at most one that takes the rest (or the next argument) as value. */
    private Given<T> parseShort(List<String> args, int i, T target) throws UsageException {
        String arg = args.get(i);
        Given<T> last = null;
        for (int at = 1; at < arg.length(); at++) {
            String name = "-" + arg.charAt(at);
            CliOption<T> option = find(name, arg);
            // A short name never takes an optional value (-p is --progress, never --progress=FD).
            if (option.arity() != CliOption.Arity.REQUIRED) {
                if (!apply(option, target, name, null)) return null;
                last = new Given<>(option, name, null, i, false);
                continue;
            }
            String value;
            boolean separate = false;
            if (at + 1 < arg.length()) {
                value = arg.substring(at + 1);
            } else if (i + 1 < args.size()) {
                value = args.get(++i);
                separate = true;
            } else {
                throw new UsageException("option " + name + " needs a value");
            }
            return apply(option, target, name, value) ? new Given<>(option, name, value, i, separate) : null;
        }
        return last;
    }

    private boolean apply(CliOption<T> option, T target, String name, String value) throws UsageException {
        if (option.longNames().contains("--help")) return false;
        option.apply(target, name, value);
        return true;
    }

    private CliOption<T> find(String name, String given) throws UsageException {
        for (CliOption<T> option : options) {
            if (option.names().contains(name)) return option;
        }
        throw new UsageException("unknown option '" + name + "'" + (given.equals(name) ? "" : " (in '" + given + "')")
                + suggestion(name) + unknownHint);
    }

    /**
     * {@return "; did you mean --stats?" for a name close to some option's}: a long name that starts with it or
     * that it starts with, or one a typo or two away; for a short name, the long names that start with its letter.
     * Else, or when more than four would be named, where the list of options is.
     */
    String suggestion(String name) {
        List<String> close = new ArrayList<>();
        if (name.startsWith("--")) {
            String bare = name.indexOf('=') < 0 ? name : name.substring(0, name.indexOf('='));
            int best = Math.max(1, Math.min(2, (bare.length() - 2) / 4));
            for (CliOption<T> option : options) {
                for (String known : option.longNames()) {
                    boolean prefix = bare.length() >= 4 && (known.startsWith(bare) || bare.startsWith(known));
                    int distance = prefix ? 0 : editDistance(bare, known);
                    if (distance < best) close.clear();
                    if (distance <= best && !close.contains(known)) {
                        best = distance;
                        close.add(known);
                    }
                }
            }
        } else if (name.length() == 2) {
            // Not the same letter in the other case: -T (qemu-nbd's trace) is nothing like -t.
            for (CliOption<T> option : options) {
                String known = option.longNames().get(0);
                if (known.charAt(2) == Character.toLowerCase(name.charAt(1))) close.add(known);
            }
        }
        if (close.isEmpty() || close.size() > 4) return " (" + command() + " --help lists the options)";
        return "; did you mean " + (close.size() == 1 ? close.get(0)
                : String.join(", ", close.subList(0, close.size() - 1)) + " or " + close.get(close.size() - 1)) + "?";
    }

    /** {@return the command as the synopsis names it}: pagewise serve */
    private String command() {
        StringBuilder command = new StringBuilder();
        for (String word : synopsis.replaceFirst("^usage: ", "").split(" ")) {
            if (!word.matches("[a-z]+")) break;
            command.append(command.length() == 0 ? "" : " ").append(word);
        }
        return command.toString();
    }

    /** {@return how many letters must be inserted, deleted, replaced or swapped with the next to turn a into b} */
    static int editDistance(String a, String b) {
        int[][] d = new int[a.length() + 1][b.length() + 1];
        for (int i = 0; i <= a.length(); i++) d[i][0] = i;
        for (int j = 0; j <= b.length(); j++) d[0][j] = j;
        for (int i = 1; i <= a.length(); i++) {
            for (int j = 1; j <= b.length(); j++) {
                int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
                d[i][j] = Math.min(d[i - 1][j - 1] + cost, Math.min(d[i - 1][j], d[i][j - 1]) + 1);
                if (i > 1 && j > 1 && a.charAt(i - 1) == b.charAt(j - 2) && a.charAt(i - 2) == b.charAt(j - 1)) {
                    d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
                }
            }
        }
        return d[a.length()][b.length()];
    }
}

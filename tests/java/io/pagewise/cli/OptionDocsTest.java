package io.pagewise.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The docs list exactly the options of each command's {@link OptionTable}: the option tables of docs/SERVER.md and
 * docs/COPY.md (and docs/BACKUP.md for checksum) name every option of serve, copy and checksum and no other, with
 * its value and all its names in one row; the README's command-line section names pagewise's own options and those
 * of cachestats and evict; and every command
 * line in the docs ({@code pagewise copy --x ...}) uses options that exist.
 */
@Timeout(30)
class OptionDocsTest {
    private static final Path PROJECT = Path.of(System.getProperty("user.dir"));
    /** An option in docs text: -r, --read-only (not a negative number, not part of a word such as pagewise-evict). */
    private static final Pattern OPTION = Pattern.compile("(?<![\\w-])(--?[a-zA-Z][\\w-]*)");
    private static final Pattern CODE = Pattern.compile("`([^`]*)`");

    private static String section(String file, String heading) throws IOException {
        String doc = Files.readString(PROJECT.resolve(file));
        int start = doc.indexOf("\n" + heading + "\n");
        assertTrue(start >= 0, file + " has no section '" + heading + "'");
        int end = doc.indexOf("\n## ", start + 1);
        return doc.substring(start, end < 0 ? doc.length() : end);
    }

    private static Set<String> names(OptionTable<?> table) {
        return table.options().stream().flatMap(o -> o.names().stream()).collect(Collectors.toCollection(TreeSet::new));
    }

    /** The first column of each row of the section's option table that starts with an option. */
    private static List<String> optionRows(String section) {
        List<String> rows = new ArrayList<>();
        for (String line : section.split("\n")) {
            if (line.startsWith("| `-")) rows.add(line.substring(2, line.indexOf(" |", 2)));
        }
        return rows;
    }

    private static Set<String> optionsIn(String text) {
        Set<String> found = new TreeSet<>();
        Matcher code = CODE.matcher(text);
        while (code.find()) {
            Matcher m = OPTION.matcher(code.group(1));
            // Only a code span that starts with an option names one: `--cache=MODE`, not `nbd-client -d`.
            if (!m.lookingAt()) continue;
            String name = m.group(1);
            if (name.startsWith("--") || name.length() == 2) {
                found.add(name);
                continue;
            }
            // Grouped short options (-pv), or one with its value attached (-R16): each letter up to the value.
            for (int i = 1; i < name.length() && Character.isLetter(name.charAt(i)); i++) found.add("-" + name.charAt(i));
        }
        return found;
    }

    private static void assertTableDocumented(OptionTable<?> table, String file) throws IOException {
        String section = section(file, "## Options");
        List<String> rows = optionRows(section);
        Set<String> documented = new TreeSet<>();
        for (String row : rows) OPTION.matcher(row).results().forEach(m -> documented.add(m.group(1)));
        assertEquals(names(table), documented, file + "'s option table against the table of " + table.synopsis());

        for (CliOption<?> option : table.options()) {
            List<String> row = rows.stream().filter(r -> OPTION.matcher(r).results()
                    .anyMatch(m -> m.group(1).equals(option.longNames().get(0)))).collect(Collectors.toList());
            assertTrue(!row.isEmpty(), option.synopsis() + " has no row in " + file);
            String text = String.join(" ", row);
            for (String name : option.names()) {
                assertTrue(text.matches("(?s).*(?<![\\w-])" + Pattern.quote(name) + "(?![\\w-]).*"),
                        name + " is not in the row of " + option.synopsis() + " in " + file + ": " + text);
            }
            if (option.valueName() == null) continue;
            for (String name : option.longNames()) {
                assertTrue(text.contains("`" + name + "=" + option.valueName() + "`")
                                || text.contains("`" + name + "[=" + option.valueName() + "]`"),
                        file + " does not show " + name + "=" + option.valueName() + ": " + text);
            }
        }
        Set<String> unknown = new TreeSet<>(optionsIn(section));
        unknown.removeAll(names(table));
        assertEquals(Set.of(), unknown, "options named in " + file + "'s Options section that " + table.synopsis()
                + " does not have");
    }

    @Test
    void serveAndCopyDocsListExactlyTheirTables() throws IOException {
        assertTableDocumented(ServeCommand.TABLE, "docs/SERVER.md");
        assertTableDocumented(CopyCommand.TABLE, "docs/COPY.md");
        assertTableDocumented(ChecksumCommand.TABLE, "docs/BACKUP.md");
    }

    @Test
    void theReadmeNamesPagewisesOwnOptionsAndThoseOfCachestatsAndEvict() throws IOException {
        String section = section("README.md", "## Command line");
        for (OptionTable<?> table : List.of(Main.TABLE, Main.fileCommandTable("cachestats"), Main.fileCommandTable("evict"))) {
            for (String name : names(table)) {
                assertTrue(section.matches("(?s).*(?<![\\w-])" + Pattern.quote(name) + "(?![\\w-]).*"),
                        "README.md's Command line section does not name " + name + " of " + table.synopsis());
            }
        }
    }

    /** Every {@code pagewise COMMAND ... --option} in the docs, in code spans and shell blocks, uses real options. */
    @Test
    void everyCommandLineInTheDocsUsesOptionsThatExist() throws IOException {
        Map<String, Set<String>> commands = Map.of(
                "serve", names(ServeCommand.TABLE), "copy", names(CopyCommand.TABLE), "checksum", names(ChecksumCommand.TABLE),
                "cachestats", names(Main.fileCommandTable("cachestats")), "evict", names(Main.fileCommandTable("evict")));
        Pattern command = Pattern.compile("pagewise (serve|copy|checksum|cachestats|evict)\\b");
        List<Path> docs = new ArrayList<>(List.of(PROJECT.resolve("README.md")));
        try (Stream<Path> files = Files.list(PROJECT.resolve("docs"))) {
            files.filter(f -> f.toString().endsWith(".md")).sorted().forEach(docs::add);
        }
        List<String> wrong = new ArrayList<>();
        int checked = 0;
        for (Path doc : docs) {
            for (String line : Files.readAllLines(doc)) {
                Matcher m = command.matcher(line);
                while (m.find()) {
                    boolean inCode = line.substring(0, m.start()).chars().filter(c -> c == '`').count() % 2 == 1;
                    int end = inCode ? line.indexOf('`', m.end()) : line.indexOf(" #", m.end());
                    String args = line.substring(m.end(), end < 0 ? line.length() : end);
                    for (Matcher o = OPTION.matcher(args); o.find(); ) {
                        // Only the command's own arguments: stop at a quoted --run command or a pipe.
                        if (args.substring(0, o.start()).matches("(?s).*['\"|].*")) break;
                        checked++;
                        if (!commands.get(m.group(1)).contains(o.group(1))) {
                            wrong.add(PROJECT.relativize(doc) + ": pagewise " + m.group(1) + " " + o.group(1) + " in: " + line);
                        }
                    }
                }
            }
        }
        assertTrue(checked >= 20, "only " + checked + " options found on command lines in the docs");
        assertEquals(List.of(), wrong, "command lines in the docs with options their command does not have");
    }

    /** The table itself: no name twice, every option has help, the usage shows every name. */
    @Test
    void everyTableIsComplete() {
        for (OptionTable<?> table : List.of(Main.TABLE, ServeCommand.TABLE, CopyCommand.TABLE, ChecksumCommand.TABLE,
                Main.fileCommandTable("evict"))) {
            String usage = table.usage();
            for (CliOption<?> option : table.options()) {
                assertTrue(!option.help().isBlank(), option.synopsis());
                assertTrue(usage.contains("  " + option.synopsis() + " ") || usage.contains("  " + option.synopsis() + "\n"),
                        usage);
                for (String name : option.longNames()) assertTrue(usage.contains(name), name + " in\n" + usage);
            }
        }
    }
}

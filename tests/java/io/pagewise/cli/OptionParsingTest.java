package io.pagewise.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The parsing {@link OptionTable} gives serve and copy: nbdcopy's short options, getopt's forms, and the mistakes. */
@Timeout(30)
class OptionParsingTest {
    private static CopyCommand.Options copy(String... args) throws UsageException {
        return CopyCommand.parse(List.of(args));
    }

    private static String copyMistake(String... args) {
        return assertThrows(UsageException.class, () -> copy(args), String.join(" ", args)).getMessage();
    }

    @Test
    void nbdcopysShortOptionsTakeTheirValueSeparateOrAttached() throws Exception {
        for (List<String> args : List.of(List.of("-C", "3", "-R", "7", "-S", "0"), List.of("-C3", "-R7", "-S0"),
                List.of("--connections=3", "--requests", "7", "--sparse=0"))) {
            List<String> all = new java.util.ArrayList<>(args);
            all.addAll(List.of("a.img", "b.img"));
            CopyCommand.Options o = CopyCommand.parse(all);
            assertEquals(3, o.connections, all.toString());
            assertEquals(7, o.copy.requests(), all.toString());
            assertEquals(0, o.copy.sparseBlock(), all.toString());
            assertEquals("a.img", o.source.text());
            assertEquals("b.img", o.destination.text());
        }
    }

    @Test
    void dashPIsTheProgressBarAndNeverTakesTheNextArgument() throws Exception {
        CopyCommand.Options o = copy("-p", "a.img", "b.img");
        assertTrue(o.progress);
        assertNull(o.progressFd);
        assertEquals("a.img", o.source.text());
        CopyCommand.Options grouped = copy("-pv", "a.img", "b.img");
        assertTrue(grouped.progress && grouped.verbose);
        CopyCommand.Options both = copy("--progress=2", "--target-is-zero", "a.img", "b.img");
        assertEquals(2, both.progressFd);
        assertTrue(both.copy.destinationIsZero());
    }

    @Test
    void aGroupEndsWithTheOptionThatTakesTheRestAsItsValue() throws Exception {
        CopyCommand.Options o = copy("-vC2", "a.img", "b.img");
        assertTrue(o.verbose);
        assertEquals(2, o.connections);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "-C 0 a b|-C 0: expected a whole number from 1 to 64",
            "-R|option -R needs a value",
            "-S 100 a b|-S 100: expected 0 or at least 512",
            "-x a b|unknown option '-x'",
            "-px a b|unknown option '-x' (in '-px')",
            "--flush=yes a b|option --flush takes no value",
            "--requests|option --requests needs a value",
            "--filter=frob a b|--filter=frob: unknown filter 'frob': expected one of cow, error, delay",
            "--dst-filter=:x=1 a b|--dst-filter=:x=1: filter ':x=1': no filter name",
            "--filter=readonly - b|--filter applies to a source device, and SRC is - (standard input)",
            "--dst-filter=readonly a -|--dst-filter applies to a destination device, and DST is - (standard output)",
            "- -|SRC and DST are both -",
            "a b c|more than SRC and DST given ('c')",
    })
    void copyMistakesNameTheOptionAsGiven(String args, String message) {
        String got = copyMistake(args.split(" "));
        assertTrue(got.contains(message), got);
    }

    @Test
    void aDashIsAStreamAndDoubleDashEndsTheOptions() throws Exception {
        CopyCommand.Options in = copy("-", "b.img");
        assertEquals(Endpoint.Kind.STREAM, in.source.kind());
        CopyCommand.Options out = copy("a.img", "-");
        assertEquals(Endpoint.Kind.STREAM, out.destination.kind());
        CopyCommand.Options names = copy("--", "-odd.img", "-v");
        assertEquals("-odd.img", names.source.text());
        assertEquals("-v", names.destination.text());
        assertFalse(names.verbose);
    }

    @Test
    void filtersAreKeptInTheOrderGiven() throws Exception {
        CopyCommand.Options o = copy("--filter=readonly", "--dst-filter", "readonly", "a.img", "b.img");
        assertEquals(List.of("readonly"), o.sourceFilters);
        assertEquals(List.of("readonly"), o.destinationFilters);
        ServeOptions serve = ServeCommand.parse(List.of("--filter=readonly", "--filter", "READONLY", "x.img"));
        assertEquals(List.of("readonly", "READONLY"), serve.filters);
    }

    @Test
    void serveGroupsSwitchesAndTakesAnyNameAfterDoubleDash(@TempDir Path dir) throws Exception {
        Path disk = java.nio.file.Files.createFile(dir.resolve("disk.img"));
        ServeOptions o = ServeCommand.parse(List.of("-rv", "--stats", disk.toString()));
        assertTrue(o.readOnly && o.verbose && o.stats);
        assertNull(o.statsFile, "--stats takes a value only with =");
        ServeOptions dashed = ServeCommand.parse(List.of("--", "nbd://looks-like-a-uri"));
        assertEquals(Path.of("nbd://looks-like-a-uri"), dashed.files.get(0).path(), "after -- it is a FILE");
        assertNull(dashed.upstream);
        ServeOptions two = ServeCommand.parse(List.of("a.img", "--", "-b.img"));
        assertEquals(List.of(new ServeOptions.FileOperand("a.img", Path.of("a.img")),
                new ServeOptions.FileOperand("-b.img", Path.of("-b.img"))), two.files, "several FILEs, named after their files");
        UsageException flag = assertThrows(UsageException.class, () -> ServeCommand.parse(List.of("-r=yes")));
        assertTrue(flag.getMessage().contains("unknown option '-=' (in '-r=yes')"), flag.getMessage());
    }

    @Test
    void helpWinsOverWhatFollowsButNotOverAMistakeBeforeIt() throws Exception {
        assertNull(copy("-h", "--frob"));
        assertNull(ServeCommand.parse(List.of("-rh", "--frob")));
        assertThrows(UsageException.class, () -> copy("--frob", "--help"));
    }

    @Test
    void theUsageIsMadeFromTheTable() {
        String usage = CopyCommand.USAGE;
        assertTrue(usage.startsWith("usage: pagewise copy [OPTIONS] SRC DST\n"), usage);
        assertTrue(usage.contains("\n  -C, --connections=N            NBD connections"), usage);
        assertTrue(usage.contains("\n  -p, --progress[=FD]            progress bar"), usage);
        assertTrue(usage.contains("\n  --dst-filter=NAME[:KEY=VALUE,...]\n                                 wrap the"
                + " destination"), usage);
        assertTrue(usage.contains("\n  --destination-is-zero          the destination already reads as zeros: skip zero"
                + " ranges (nbdcopy's names)"), usage);
        assertTrue(usage.contains(" (also --target-is-zero)\n"), usage);
        assertTrue(usage.endsWith("\n  " + String.format("%-31s", "-h, --help") + "show this help"), usage);
        for (String line : usage.split("\n")) assertTrue(line.length() <= 112, "too long: " + line);
    }

    /**
     * In every usage the help of every option, and of every command in pagewise's, starts in one column: after the
     * option's synopsis, or on the next line when the synopsis is too long to leave room; wrapped lines too.
     */
    @Test
    void everyUsageHasItsHelpInOneColumn() {
        for (OptionTable<?> table : List.of(Main.TABLE, ServeCommand.TABLE, CopyCommand.TABLE, ChecksumCommand.TABLE,
                Main.fileCommandTable("evict"))) {
            String usage = table.usage();
            List<String> lines = List.of(usage.split("\n"));
            int start = lines.indexOf(lines.stream().filter(l -> l.startsWith("  -")).findFirst().orElseThrow());
            if (table == Main.TABLE) start = lines.indexOf("commands:") + 1;
            java.util.Set<Integer> columns = new java.util.TreeSet<>();
            for (String line : lines.subList(start, lines.size())) {
                // pagewise's commands and its own options are two lists, each with its column.
                if (line.equals("options:") && table == Main.TABLE) {
                    assertEquals(1, columns.size(), "commands' help starts in columns " + columns + ":\n" + usage);
                    columns.clear();
                }
                if (line.isEmpty() || !line.startsWith(" ")) continue; // a blank line, a heading
                // A synopsis is followed by two spaces or more and the help; a wrapped line is all help.
                int gap = line.charAt(2) == ' ' ? 0 : line.indexOf("  ", 2);
                if (gap < 0) continue; // a synopsis too long for the column, on a line of its own
                int help = gap;
                while (line.charAt(help) == ' ') help++;
                columns.add(help);
            }
            assertEquals(1, columns.size(), "help starts in columns " + columns + ":\n" + usage);
            for (String line : lines) assertTrue(line.length() <= 112, "too long: " + line);
        }
        assertTrue(Main.USAGE.contains("\n  serve [OPTIONS] [FILE...]    serve"), Main.USAGE);
        assertTrue(ServeCommand.USAGE.startsWith("usage: pagewise serve [OPTIONS] [FILE... | NBD-URI]\n"));
    }

    @Test
    void servesCacheHelpListsEveryCacheModeInDeclarationOrder() {
        String help = ServeCommand.TABLE.options().stream().filter(o -> o.longNames().contains("--cache")).findFirst()
                .orElseThrow().help();
        assertEquals("writeback (default), writethrough, unsafe, direct, directsync, evict, dontcache;"
                + " qemu-nbd's none is direct", help);
        for (io.pagewise.CacheMode mode : io.pagewise.CacheMode.values()) {
            assertTrue(help.contains(mode.name().toLowerCase(java.util.Locale.ROOT)), mode + " in " + help);
        }
    }
}

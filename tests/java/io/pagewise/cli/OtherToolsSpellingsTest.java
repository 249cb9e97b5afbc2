package io.pagewise.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.CacheMode;
import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The spellings of qemu-nbd and nbdkit that serve takes, and the mix-ups between them that it names: every alias in
 * every option table parses to the settings of its long form, and each clash gets one line naming the option to use.
 */
@Timeout(30)
class OtherToolsSpellingsTest {
    @TempDir
    Path dir;

    /** Values to try for an option, the first its long form takes is used: one for each kind of value in the tables. */
    private static final List<String> VALUES = List.of("name", "3", "64M", "direct", "threads", "unmap", "raw", "127.0.0.1",
            "sequential", "require", "journal", "sha256", "readonly", "-");

    /** The spellings qemu-nbd and nbdkit users type, which serve must take. */
    private static final Set<String> OTHER_TOOLS = Set.of("-p", "-b", "-k", "-x", "-r", "-t", "-e", "-f", "-n", "-s",
            "-A", "-B", "-D", "-v", "-U", "-i", "-P", "--pid-file", "--persistent", "--shared", "--format", "--aio",
            "--discard", "--snapshot", "--nocache", "--unix", "--ipaddr", "--exportname", "--readonly", "-u", "-g");

    private record Parsed(Map<String, String> settings, String refusal) {}

    /** Parses one option (and its value) alone with the table, as the command would fill its options. */
    private static <T> Parsed parse(OptionTable<T> table, Supplier<T> options, List<String> args) {
        T target = options.get();
        try {
            table.parse(args, target);
            return new Parsed(settings(target, 0), null);
        } catch (UsageException e) {
            return new Parsed(null, e.getMessage());
        }
    }

    /** Every field of the options object, the pagewise objects in it field by field, the rest as their text. */
    private static Map<String, String> settings(Object object, int depth) {
        Map<String, String> settings = new TreeMap<>();
        for (Class<?> c = object.getClass(); c != null && c != Object.class; c = c.getSuperclass()) {
            for (Field field : c.getDeclaredFields()) {
                if (Modifier.isStatic(field.getModifiers())) continue;
                field.setAccessible(true);
                Object value;
                try {
                    value = field.get(object);
                } catch (IllegalAccessException e) {
                    throw new AssertionError(e);
                }
                String key = c.getSimpleName() + "." + field.getName();
                if (value != null && depth < 3 && value.getClass().getName().startsWith("io.pagewise.")
                        && !value.getClass().isRecord() && !value.getClass().isEnum()) {
                    settings(value, depth + 1).forEach((k, v) -> settings.put(key + "." + k, v));
                } else {
                    settings.put(key, String.valueOf(value));
                }
            }
        }
        return settings;
    }

    /**
     * For each option with more than one name, each of its other names parses, with the same value, to the settings its
     * first long name gives, or is refused as the long name is; the value is the first of {@link #VALUES} the long
     * name takes. {@return the names compared}
     */
    private static <T> Set<String> assertAliasesMatchTheirLongForm(OptionTable<T> table, Supplier<T> options) {
        Set<String> compared = new TreeSet<>();
        for (CliOption<T> option : table.options()) {
            String longName = option.longNames().get(0);
            if (option.names().size() == 1 || longName.equals("--help")) continue;
            List<String> values = option.arity() == CliOption.Arity.REQUIRED ? VALUES : java.util.Collections.singletonList(null);
            String value = null;
            Parsed expected = null;
            for (String candidate : values) {
                expected = parse(table, options, List.of(candidate == null ? longName : longName + "=" + candidate));
                value = candidate;
                if (expected.refusal() == null) break;
            }
            for (String name : option.names()) {
                if (name.equals(longName)) continue;
                List<String> args = value == null ? List.of(name)
                        : name.startsWith("--") ? List.of(name + "=" + value) : List.of(name, value);
                Parsed got = parse(table, options, args);
                if (expected.refusal() != null) {
                    assertTrue(got.refusal() != null, args + " is taken, but " + longName + "=" + value + " is refused: "
                            + expected.refusal());
                } else {
                    assertEquals(expected.settings(), got.settings(), args + " against " + longName
                            + (value == null ? "" : "=" + value) + (got.refusal() == null ? "" : ": " + got.refusal()));
                }
                compared.add(name);
            }
        }
        return compared;
    }

    @Test
    void everyAliasParsesToTheSettingsOfItsLongForm() {
        Set<String> serve = assertAliasesMatchTheirLongForm(ServeCommand.TABLE, ServeOptions::new);
        Set<String> missing = new TreeSet<>(OTHER_TOOLS);
        missing.removeAll(serve);
        // -A, -r, -v: serve's own short names, each compared with its long name; the rest are aliases of qemu-nbd's
        // and nbdkit's or their own options.
        for (String name : missing) {
            assertTrue(ServeCommand.TABLE.options().stream().anyMatch(o -> o.names().contains(name)),
                    name + " is not one of serve's options");
        }
        assertTrue(missing.stream().allMatch(n -> n.startsWith("--")), "short names not compared: " + missing);
        assertAliasesMatchTheirLongForm(CopyCommand.TABLE, CopyCommand.Options::new);
        assertAliasesMatchTheirLongForm(ChecksumCommand.TABLE, ChecksumCommand.Options::new);
        assertAliasesMatchTheirLongForm(Main.TABLE, Main.Options::new);
    }

    @Test
    void qemuNbdsSpellingsMeanWhatTheyMeanToQemuNbd() throws Exception {
        Path disk = Files.createFile(dir.resolve("disk.img"));
        ServeOptions o = ServeCommand.parse(List.of("-p", "10810", "-b", "127.0.0.1", "-x", "vm", "-t", "-e", "2",
                "-f", "raw", "-n", "-s", "-D", "the vm", "-B", "b", "--pid-file", dir.resolve("pid").toString(),
                "--aio=threads", "--discard=unmap", disk.toString()));
        assertEquals(10810, o.port);
        assertEquals("127.0.0.1", o.bind.getHostAddress());
        assertEquals("vm", o.files.get(0).name());
        assertEquals(2, o.maxConnections);
        assertTrue(o.forceRaw, "-f raw serves the bytes as they are, as --force-raw");
        assertEquals(CacheMode.DIRECT, o.cache, "-n is qemu-nbd's --nocache: O_DIRECT");
        assertEquals(List.of("cow"), o.filters, "-s writes into a temporary overlay");
        assertEquals("the vm", o.description);
        assertEquals("b", o.bitmaps.get(0).name());
        assertEquals(dir.resolve("pid"), o.pidFile);
        assertEquals(65536, ServeCommand.parse(List.of("--shared=0", disk.toString())).maxConnections, "0: no limit");
        ServeOptions unix = ServeCommand.parse(List.of("-k", dir.resolve("s").toString(), disk.toString()));
        assertEquals(dir.resolve("s"), unix.socket);
        ServeOptions snapshotUnderFilters = ServeCommand.parse(List.of("-s", "--filter=readonly", disk.toString()));
        assertEquals(List.of("readonly", "cow"), snapshotUnderFilters.filters, "the snapshot is nearest the FILE");
    }

    @Test
    void nbdkitsSpellingsThatDoNotClashAreTaken() throws Exception {
        Path disk = Files.createFile(dir.resolve("disk.img"));
        ServeOptions o = ServeCommand.parse(List.of("-U", dir.resolve("s").toString(), "-P",
                dir.resolve("pid").toString(), "--exit-with-parent", "--exportname=vm", "--readonly", disk.toString()));
        assertEquals(dir.resolve("s"), o.socket);
        assertEquals(dir.resolve("pid"), o.pidFile);
        assertTrue(o.exitWithParent && o.readOnly);
        assertEquals("vm", o.files.get(0).name());
        assertEquals("127.0.0.1", ServeCommand.parse(List.of("-i", "127.0.0.1", disk.toString())).bind.getHostAddress());
        ServeOptions captive = ServeCommand.parse(List.of("-U", "-", "--run", "true", disk.toString()));
        assertEquals(null, captive.socket, "-U - is --run's private socket, as without --socket");
    }

    /** Where qemu-nbd and nbdkit disagree, or pagewise has no such thing: one line that names what to give. */
    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "-e vm DISK|--export-name=vm",
            "-t 4 DISK|--threads=4",
            "-f DISK|--foreground",
            "-f qcow2 DISK|qemu-img convert -f qcow2 -O raw",
            "-P 1 DISK|--pidfile=./1",
            "-D file.zero=1 DISK|--description='file.zero=1'",
            "--aio=native DISK|--aio=threads",
            "--discard=ignore DISK|--discard=unmap",
            "-U - DISK|--socket=PATH",
            "-U - -p 10810 --run true DISK|--socket cannot be combined with --port",
            "--tls-creds=tls0 DISK|--tls-certificates=DIR",
            "-c /dev/nbd0 DISK|nbd-client",
            "-L|nbdinfo --list",
    })
    void aMixUpGetsOneLineNamingTheSpellingToUse(String args, String named) throws IOException {
        Path disk = Files.createFile(dir.resolve("disk.img"));
        List<String> line = new ArrayList<>();
        for (String arg : args.split(" ")) line.add(arg.equals("DISK") ? disk.toString() : arg);
        CommandRun run = CommandRun.command("serve", line.toArray(new String[0]));
        run.assertStatus(2);
        String first = run.err().lines().findFirst().orElse("");
        assertTrue(first.startsWith("pagewise serve: ") && first.contains(named), run.err());
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "serve --pidfle=x|unknown option '--pidfle'; did you mean --pidfile?",
            "serve --stat|unknown option '--stat'; did you mean --stats?",
            "serve --max-conections=3|did you mean --max-connections?",
            "serve -a|unknown option '-a'; did you mean --allocation-depth, --allow, --allow-user or --aio?",
            "serve -T|unknown option '-T' (pagewise serve --help lists the options)",
            "serve -q|unknown option '-q' (pagewise serve --help lists the options)",
            "copy --progres|did you mean --progress?",
            "copy --target-is-zeros a b|did you mean --target-is-zero?",
            "checksum --digset=md5 a|did you mean --digest?",
            "serv|unknown command 'serv'; did you mean serve?",
            "chekcsum|unknown command 'chekcsum'; did you mean checksum?",
            "cop a b|unknown command 'cop'; did you mean copy?",
            "--verison|unknown option '--verison'; did you mean --version?",
    })
    void anUnknownOptionOrCommandGetsDidYouMean(String args, String message) {
        CommandRun run = CommandRun.of(args.split(" "));
        run.assertStatus(2);
        assertTrue(run.err().lines().findFirst().orElse("").contains(message), run.err());
    }

    @Test
    void aWordAfterStatsIsNeverASecondExportWithoutAWord() throws Exception {
        Path disk = Files.createFile(dir.resolve("disk.img"));
        Path stats = Files.writeString(dir.resolve("st.txt"), "an earlier run's statistics\n");
        Path missing = dir.resolve("new.txt");
        for (Path word : List.of(stats, missing)) {
            UsageException e = assertThrows(UsageException.class,
                    () -> ServeCommand.parse(List.of("--stats", word.toString(), disk.toString())));
            assertTrue(e.getMessage().contains("did you mean --stats=" + word + "?"), e.getMessage());
        }
        UsageException alone = assertThrows(UsageException.class,
                () -> ServeCommand.parse(List.of("--stats", missing.toString())));
        assertTrue(alone.getMessage().startsWith("did you mean --stats=" + missing + "?"), alone.getMessage());
        assertTrue(!alone.getMessage().contains("--create"), alone.getMessage());

        ServeOptions served = ServeCommand.parse(List.of("--stats", disk.toString()));
        assertEquals(List.of(new ServeOptions.FileOperand("", disk)), served.files);
        assertTrue(served.stats && served.statsFile == null);
        assertEquals(1, served.notices.size(), "said what became of the word");
        assertTrue(served.notices.get(0).contains("--stats=" + disk), served.notices.toString());
        assertEquals(List.of(), ServeCommand.parse(List.of(disk.toString(), "--stats")).notices);
        assertEquals(List.of(), ServeCommand.parse(List.of("--stats=" + stats, disk.toString())).notices);
        ServeOptions created = ServeCommand.parse(List.of("--create=1M", "--stats", missing.toString()));
        assertEquals(missing, created.files.get(0).path(), "with --create a missing FILE is made");
        // A word after a switch is a FILE, as ever, unless it is nbdkit's -t THREADS.
        assertEquals(disk, ServeCommand.parse(List.of("-t", disk.toString())).files.get(0).path());
    }

    @Test
    void aWordAfterCopysChecksumOrProgressThatIsItsValueIsNotAFile() throws Exception {
        Path source = Files.write(dir.resolve("src.img"), new byte[4096]);
        Path copy = dir.resolve("copy.img");
        String meant = assertThrows(UsageException.class, () -> CopyCommand.parse(List.of("--checksum", "sha512",
                source.toString(), copy.toString()))).getMessage();
        assertTrue(meant.contains("did you mean --checksum=sha512?"), meant);
        String asSource = assertThrows(UsageException.class,
                () -> CopyCommand.parse(List.of("--checksum", "sha512", source.toString()))).getMessage();
        assertTrue(asSource.startsWith("did you mean --checksum=sha512?"), asSource);
        String asDestination = assertThrows(UsageException.class,
                () -> CopyCommand.parse(List.of(source.toString(), "--checksum", "md5"))).getMessage();
        assertTrue(asDestination.startsWith("did you mean --checksum=md5?"), asDestination);
        String progress = assertThrows(UsageException.class,
                () -> CopyCommand.parse(List.of("--progress", "2", source.toString(), copy.toString()))).getMessage();
        assertTrue(progress.contains("did you mean --progress=2?"), progress);
        // A word that is no value of the option is SRC or DST, as ever.
        CopyCommand.Options o = CopyCommand.parse(List.of("--checksum", source.toString(), copy.toString()));
        assertEquals(source.toString(), o.source.text());
        assertEquals(copy.toString(), CopyCommand.parse(List.of("--progress", source.toString(), copy.toString()))
                .destination.text());
    }
}

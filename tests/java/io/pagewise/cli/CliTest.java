package io.pagewise.cli;

import static io.pagewise.testing.TestData.randomFile;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.Native;
import io.pagewise.PageCache;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The {@code pagewise} command line through {@link Main#run}: exit codes, output and messages. */
@Timeout(60)
class CliTest {
    private static final int SIZE = 8 << 20;

    @TempDir
    Path dir;

    private Path file(String name, int size) throws Exception {
        return randomFile(dir.resolve(name), size, size);
    }

    @Test
    void helpPrintsUsageAndSucceeds() {
        for (String flag : new String[] {"--help", "-h", "help"}) {
            CommandRun r = CommandRun.of(flag);
            assertEquals(0, r.status(), flag);
            assertTrue(r.out().startsWith("usage: pagewise COMMAND"), r.out());
            assertTrue(r.out().contains("cachestats FILE") && r.out().contains("evict FILE"), r.out());
            assertEquals("", r.err());
        }
    }

    @Test
    void fileCommandsTakeNoOptions() throws Exception {
        Path a = file("a.img", 4096);
        for (String command : new String[] {"cachestats", "evict"}) {
            CommandRun unknown = CommandRun.of(command, "--frob", a.toString());
            unknown.assertStatus(2);
            assertTrue(unknown.err().contains("unknown option '--frob'") && unknown.err().contains("usage: pagewise " + command),
                    unknown.err());
            CommandRun help = CommandRun.of(command, "--help");
            help.assertOk();
            assertTrue(help.out().startsWith("usage: pagewise " + command), help.out());
        }
        CommandRun r = CommandRun.of("cachestats", "--", a.toString());
        r.assertOk();
        assertTrue(r.out().startsWith(a + ": "), r.out());
    }

    /** The usage made from the tables keeps the details the hand-written one had (the docs: OptionDocsTest). */
    @Test
    void usageKeepsItsDetails() {
        assertTrue(ServeCommand.USAGE.contains("$exportname"), ServeCommand.USAGE);
        // Wrapped lines read as one text.
        assertTrue(CopyCommand.USAGE.replaceAll("\\s+", " ").contains("at least 512"), CopyCommand.USAGE);
    }

    @Test
    void noArgumentsIsAUsageError() {
        CommandRun r = CommandRun.of();
        assertEquals(2, r.status());
        r.assertErrContains("usage: pagewise");
        assertEquals("", r.out());
    }

    @Test
    void versionPrintsTheVersionAndNativeStatus() {
        for (String flag : new String[] {"--version", "-V"}) {
            CommandRun r = CommandRun.of(flag);
            assertEquals(0, r.status());
            String line = r.out().strip();
            assertTrue(line.matches("pagewise \\d+\\.\\d+\\.\\d+\\S* \\(native library: .*\\)"),
                    "a filtered version number: " + line);
            assertTrue(Native.isAvailable(), "this JVM has the native library");
            assertTrue(line.endsWith("(native library: loaded, " + Native.platform() + ", " + Native.binding()
                    + "; asynchronous I/O: " + Native.asyncPath() + ")"), line);
        }
    }

    @Test
    void cachestatsShowsResidentAndTotalPages() throws Exception {
        Path a = file("a.img", SIZE);
        Path b = file("b.img", SIZE / 2 + 1);
        int page = PageCache.pageSize();
        PageCache.touch(a);
        PageCache.evict(b);
        CommandRun r = CommandRun.of("cachestats", a.toString(), b.toString());
        r.assertOk();
        assertEquals("", r.err());
        String[] lines = r.out().split("\n");
        assertEquals(2, lines.length, r.out());
        long aPages = SIZE / page;
        long bPages = (SIZE / 2 + 1 + page - 1) / page;
        assertEquals(a + ": " + aPages + "/" + aPages + " pages resident (100.0%), 8.0 MiB of 8.0 MiB", lines[0]);
        assertEquals(b + ": 0/" + bPages + " pages resident (0.0%), 0 B of " + Main.bytes(bPages * page), lines[1]);
    }

    @Test
    void evictDropsTheFileFromThePageCache() throws Exception {
        Path a = file("evict.img", SIZE);
        PageCache.touch(a);
        assertEquals(100.0, PageCache.residency(a).percent(), "touched first");
        CommandRun r = CommandRun.of("evict", a.toString());
        r.assertOk();
        assertEquals("evicted " + a, r.out().strip());
        assertEquals(0, PageCache.residency(a).residentPages());
        CommandRun stats = CommandRun.of("cachestats", a.toString());
        assertTrue(stats.out().contains(": 0/" + SIZE / PageCache.pageSize() + " pages resident (0.0%)"), stats.out());
    }

    @Test
    void aMissingFileFailsWithAClearMessageAndTheOthersStillRun() throws Exception {
        Path missing = dir.resolve("missing.img");
        Path present = file("present.img", 4096);
        for (String command : new String[] {"cachestats", "evict"}) {
            CommandRun r = CommandRun.of(command, missing.toString(), present.toString());
            assertEquals(1, r.status(), command);
            assertTrue(r.err().startsWith("pagewise " + command + ": "), r.err());
            assertTrue(r.err().contains(missing.toString()) && r.err().contains("No such file"), r.err());
            assertTrue(r.out().contains(present.toString()), "the present file is still handled: " + r.out());
            assertTrue(!r.out().contains(missing.toString()), r.out());
        }
    }

    @Test
    void aCommandWithoutFilesIsAUsageError() {
        for (String command : new String[] {"cachestats", "evict"}) {
            CommandRun r = CommandRun.of(command);
            assertEquals(2, r.status(), command);
            assertTrue(r.err().contains("no FILE given") && r.err().contains("usage: pagewise " + command), r.err());
        }
    }

    @Test
    void anUnknownCommandIsAUsageError() {
        CommandRun r = CommandRun.of("frobnicate", "x");
        assertEquals(2, r.status());
        assertTrue(r.err().startsWith("pagewise: unknown command 'frobnicate'"), r.err());
        r.assertErrContains("usage: pagewise");
        assertEquals("", r.out());
    }

    @Test
    void byteCountsAreHumanReadable() {
        assertEquals("0 B", Main.bytes(0));
        assertEquals("1023 B", Main.bytes(1023));
        assertEquals("1.0 KiB", Main.bytes(1024));
        assertEquals("1.5 KiB", Main.bytes(1536));
        assertEquals("8.0 MiB", Main.bytes(8L << 20));
        assertEquals("3.0 GiB", Main.bytes(3L << 30));
        assertEquals("2.0 PiB", Main.bytes(2L << 50));
        assertEquals("8.0 EiB", Main.bytes(Long.MAX_VALUE));
    }
}

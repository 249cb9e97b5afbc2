package io.pagewise.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.testing.ExternalTools;
import io.pagewise.testing.TestCertificates;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Paths that are not what a command needs: each is refused at once (never a hang, never a success that copied
 * nothing), with a message that names the argument, the path and what is wrong with it.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class BadPathsTest {
    @TempDir
    Path dir;
    private Path image;
    private Path fifo;

    @BeforeEach
    void files() throws Exception {
        byte[] data = new byte[1 << 20];
        new Random(7).nextBytes(data);
        image = Files.write(dir.resolve("image.img"), data);
        fifo = dir.resolve("fifo");
        ExternalTools.run(10, "mkfifo", fifo.toString()).assertOk("mkfifo " + fifo);
    }

    private static void fails(CommandRun run, int status, String... parts) {
        assertEquals(status, run.status(), run.err());
        for (String part : parts) assertTrue(run.err().contains(part), "missing '" + part + "' in: " + run.err());
        assertFalse(run.err().contains("Exception"), "a Java class name reached the user: " + run.err());
    }

    @Test
    void copyFromOrToAPipeSaysToUseStandardInputOrOutput() throws Exception {
        Path out = dir.resolve("out.img");
        fails(CommandRun.command("copy", fifo.toString(), out.toString()), 2,
                "SRC " + fifo + " is a pipe", "give - as SRC and send the data on standard input");
        assertFalse(Files.exists(out), "nothing is created for a refused copy");
        fails(CommandRun.command("copy", image.toString(), fifo.toString()), 2,
                "DST " + fifo + " is a pipe", "give - as DST to write to standard output");
        fails(CommandRun.command("copy", image.toString(), "/dev/null"), 2,
                "DST /dev/null is a character device", "give null: to discard");
    }

    @Test
    void checksumOfAPipeIsRefusedNotTheEmptyImagesChecksum() {
        CommandRun run = CommandRun.command("checksum", fifo.toString());
        fails(run, 2, "IMAGE " + fifo + " is a pipe", "give a file, a block device or an NBD URI");
        assertEquals("", run.out());
    }

    @Test
    void copyOntoItselfIsRefused() throws Exception {
        byte[] before = Files.readAllBytes(image);
        fails(CommandRun.command("copy", image.toString(), image.toString()), 2, "SRC and DST are the same file: " + image);
        Path link = Files.createSymbolicLink(dir.resolve("link.img"), image);
        fails(CommandRun.command("copy", image.toString(), link.toString()), 2,
                "SRC and DST are the same file: " + image + " and " + link);
        assertTrue(java.util.Arrays.equals(before, Files.readAllBytes(image)));
    }

    @Test
    void aDirectoryIsNamedWhereAFileIsExpected() throws Exception {
        Path sub = Files.createDirectory(dir.resolve("sub"));
        fails(CommandRun.command("serve", "--port=0", "--run", "true", sub.toString()), 1, "open " + sub + ": Is a directory (EISDIR)");
        fails(CommandRun.command("serve", "--port=0", "--run", "true", "a=" + sub, "b=" + image), 1, "open " + sub + ": Is a directory (EISDIR)");
        fails(CommandRun.command("checksum", sub.toString()), 1, "open " + sub + ": Is a directory (EISDIR)");
        fails(CommandRun.command("cachestats", sub.toString()), 1, "open " + sub + ": Is a directory (EISDIR)");
    }

    @Test
    void serveRefusesAPipeInsteadOfWaitingForAWriter() {
        fails(CommandRun.command("serve", "--port=0", "--run", "true", fifo.toString()), 1,
                "open " + fifo + ": is a pipe (FIFO)");
        fails(CommandRun.command("cachestats", fifo.toString()), 1, "open " + fifo + ": is a pipe (FIFO)");
        fails(CommandRun.command("evict", fifo.toString()), 1, "open " + fifo + ": is a pipe (FIFO)");
    }

    /** A character device has no size to serve: /dev/null was a 0-byte export whose flush failed at exit. */
    @Test
    void serveRefusesACharacterDevice() {
        fails(CommandRun.command("serve", "--port=0", "--run", "true", "/dev/null"), 1,
                "/dev/null: a character device, which has no size or blocks to serve");
    }

    private TestCertificates certificates() throws java.io.IOException {
        return TestCertificates.make(Files.createDirectory(dir.resolve("certs")));
    }

    @Test
    void outputFilesThatCannotBeWrittenAreRefusedAtStart() throws Exception {
        Path missing = dir.resolve("no-such-dir");
        CommandRun stats = CommandRun.command("serve", "--port=0", "--stats=" + missing.resolve("st"), "--run", "true",
                image.toString());
        fails(stats, 1, "--stats: " + missing.resolve("st") + ": no such file or directory");
        CommandRun filter = CommandRun.command("serve", "--port=0", "--filter=stats:file=" + missing.resolve("s"), "--run",
                "true", image.toString());
        fails(filter, 1, "filter stats: file=" + missing.resolve("s") + ": no such file or directory");
        assertFalse(filter.err().contains("may be lost"), filter.err());
        fails(CommandRun.command("serve", "--port=0", "--pidfile=" + missing.resolve("p"), "--run", "true", image.toString()),
                1, "cannot write the pid file " + missing.resolve("p") + ": no such directory " + missing);
        fails(CommandRun.command("serve", "--port=0", "--tls=require", "--tls-certificates=" + certificates().all,
                "--tls-authz=" + missing.resolve("authz"), "--run", "true", image.toString()), 1,
                missing.resolve("authz") + ": no such file or directory");
    }

    @Test
    void aFailedStartLeavesNoFileThatCreateMade() throws Exception {
        Path huge = dir.resolve("huge.img");
        CommandRun tooLarge = CommandRun.command("serve", "--port=0", "--create=9000T", "--run", "true", huge.toString());
        tooLarge.assertStatus(1);
        assertFalse(Files.exists(huge), "left behind: " + huge + "; " + tooLarge.err());
        Path first = dir.resolve("first.img");
        Path second = dir.resolve("no-such-dir").resolve("second.img");
        CommandRun partly = CommandRun.command("serve", "--port=0", "--create=1M", "--run", "true", first.toString(),
                second.toString());
        partly.assertStatus(1);
        assertFalse(Files.exists(first), "left behind: " + first + "; " + partly.err());
        assertTrue(Files.exists(image), "a FILE that existed before stays");
    }

    @Test
    void aPortThatIsNoNumberIsNamed() {
        fails(CommandRun.command("copy", "nbd://127.0.0.1:notaport/", dir.resolve("o").toString()), 2,
                "SRC: NBD URI nbd://127.0.0.1:notaport/: port 'notaport' is not a number");
        fails(CommandRun.command("copy", image.toString(), "nbd://127.0.0.1:99999/"), 2,
                "DST: NBD URI nbd://127.0.0.1:99999/: port 99999 is out of range");
        fails(CommandRun.command("checksum", "nbd://127.0.0.1:x/"), 2, "IMAGE: NBD URI nbd://127.0.0.1:x/: port 'x'");
        fails(CommandRun.command("serve", "nbd://127.0.0.1:abc/"), 2, "NBD-URI: NBD URI nbd://127.0.0.1:abc/: port 'abc'");
    }
}

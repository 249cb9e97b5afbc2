package io.pagewise.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.testing.ExternalTools;
import io.pagewise.testing.TestData;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** {@code --filter} on serve and copy and {@code --dst-filter} on copy, end to end. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class FilterOptionsTest {
    @TempDir
    Path dir;

    private Path randomFile(String name, int size) throws IOException {
        return TestData.randomFile(dir.resolve(name), size, size);
    }

    /** A client's write through {@code serve --filter=readonly} is refused with EPERM and the file is unchanged. */
    @Test
    void serveWithTheReadonlyFilterRefusesAClientsWrite() throws Exception {
        Path file = randomFile("disk.img", 1 << 20);
        byte[] before = Files.readAllBytes(file);
        String script = ExternalTools.pythonScriptCommand("write_refused.py");
        CommandRun outcome = CommandRun.of("serve", "--filter=readonly", "--run", script, file.toString());
        assertEquals(0, outcome.status(), outcome.out() + outcome.err());
        assertArrayEquals(before, Files.readAllBytes(file));

        CommandRun unfiltered = CommandRun.of("serve", "--run", script, file.toString());
        assertTrue(unfiltered.status() != 0, "without the filter the write goes through: " + unfiltered.err());
    }

    @Test
    void serveRefusesAnUnknownFilterAndParametersAFilterDoesNotTake() {
        Path never = dir.resolve("never.img");
        CommandRun unknown = CommandRun.of("serve", "--filter=frob", "--create=1M", never.toString());
        unknown.assertStatus(2);
        assertTrue(unknown.err().contains("pagewise serve: --filter=frob: unknown filter 'frob': expected one of cow, error, delay"),
                unknown.err());
        assertFalse(Files.exists(never), "a usage error must not create the file");

        CommandRun parameters = CommandRun.of("serve", "--filter=readonly:speed=1", "--run", "exit 7", "--create=1M",
                never.toString());
        parameters.assertStatus(2);
        assertTrue(parameters.err().contains("pagewise serve: --filter: filter readonly: unknown parameter speed=1 (it takes none)"),
                parameters.err());
        parameters.assertErrContains("usage: pagewise serve");
    }

    private static CommandRun copy(String... args) {
        return CommandRun.command("copy", args);
    }

    @Test
    void copyWithAReadonlyDestinationFilterIsRefusedBeforeCopying() throws Exception {
        Path src = randomFile("src.img", 1 << 20);
        Path created = dir.resolve("new.img");
        CommandRun toNew = copy("--dst-filter=readonly", src.toString(), created.toString());
        toNew.assertStatus(1).assertErrContains("pagewise copy: destination " + created + " is read-only");
        assertFalse(Files.exists(created), "the file the refused copy created is removed: " + toNew.err());

        Path existing = dir.resolve("old.img");
        Files.write(existing, new byte[1 << 20]);
        CommandRun toOld = copy("--dst-filter", "readonly", src.toString(), existing.toString());
        toOld.assertStatus(1);
        assertArrayEquals(new byte[1 << 20], Files.readAllBytes(existing), "nothing was written");
        assertTrue(toOld.err().contains("kept " + existing + ", which existed before the copy: the copy stopped before"
                + " writing to it"), toOld.err());

        CommandRun fromFiltered = copy("--filter=readonly", src.toString(), existing.toString());
        assertEquals(0, fromFiltered.status(), "a read-only source copies: " + fromFiltered.err());
        assertArrayEquals(Files.readAllBytes(src), Files.readAllBytes(existing));
    }

    @Test
    void copyRefusesAnUnknownFilterAndBadParametersNamingTheOption() throws Exception {
        Path src = randomFile("src.img", 4096);
        Path dst = dir.resolve("dst.img");
        CommandRun unknown = copy("--dst-filter=frob", src.toString(), dst.toString());
        unknown.assertStatus(2).assertErrContains("--dst-filter=frob: unknown filter 'frob'");
        CommandRun parameters = copy("--filter=readonly:x=1", src.toString(), dst.toString());
        parameters.assertStatus(2);
        assertTrue(parameters.err().contains("pagewise copy: --filter: filter readonly: unknown parameter x=1 (it takes none)"),
                parameters.err());
        assertFalse(Files.exists(dst), "the source's filter is refused before the destination is opened");
        CommandRun dstParameters = copy("--dst-filter=readonly:x=1", src.toString(), dst.toString());
        dstParameters.assertStatus(2);
        assertTrue(dstParameters.err().contains("pagewise copy: --dst-filter: filter readonly: unknown parameter x=1 (it takes none)"),
                dstParameters.err());
        assertFalse(Files.exists(dst), "a refused --dst-filter leaves no file behind");
    }
}

package io.pagewise.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.CacheMode;
import io.pagewise.Extent;
import io.pagewise.StorageFile;
import io.pagewise.backends.FileDevice;
import io.pagewise.nbd.server.NbdServer;
import io.pagewise.testing.ExternalTools;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code pagewise copy - DST} and {@code copy SRC -} in a JVM of their own, with standard input and output on real
 * pipes made by bash: files, an NBD server, nbdcopy's output as the reference, and a reader that goes away.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class CopyStreamsTest {
    private static final int MiB = 1 << 20;

    @TempDir
    Path dir;

    /** Runs a bash pipeline in which $PW is pagewise (this build's classes in a JVM of their own). */
    private ExternalTools.Result bash(String pipeline) throws IOException {
        String java = ProcessHandle.current().info().command().orElse("java");
        // As java -jar with the jar's manifest: no warning from JDK 24+ about native access (JDK 17 takes the flag too).
        Map<String, String> env = Map.of("PW", "'" + java + "' --enable-native-access=ALL-UNNAMED -cp '"
                + System.getProperty("java.class.path")
                + "' io.pagewise.cli.Main", "DIR", dir.toString());
        return ExternalTools.run(env, 90, "bash", "-c", "set -o pipefail; cd \"$DIR\"; " + pipeline.replace("$PW", "eval $PW"));
    }

    /** Random data with zero runs (a 1 MiB run, whole blocks) and a length that is not a multiple of 512. */
    private Path image(String name, int length) throws IOException {
        byte[] data = new byte[length];
        new Random(length).nextBytes(data);
        Arrays.fill(data, MiB, 2 * MiB, (byte) 0);
        Arrays.fill(data, length - 3 * 4096 - 77, length - 77, (byte) 0);
        return Files.write(dir.resolve(name), data);
    }

    @Test
    void standardInputIntoANewFileAndBackToStandardOutput() throws Exception {
        Path src = image("src.img", 6 * MiB + 77);
        bash("cat src.img | $PW copy - new.img").assertOk("cat src.img | pagewise copy - new.img");
        assertArrayEquals(Files.readAllBytes(src), Files.readAllBytes(dir.resolve("new.img")));
        try (StorageFile file = StorageFile.open(dir.resolve("new.img"))) {
            if (file.isNative()) {
                assertTrue(file.extents(MiB, MiB).stream().allMatch(Extent::hole), "the zero MiB is a hole: "
                        + file.extents(0, file.size()));
            }
        }
        bash("$PW copy --progress new.img - > out.img 2> progress.txt").assertOk("pagewise copy new.img - > out.img");
        assertArrayEquals(Files.readAllBytes(src), Files.readAllBytes(dir.resolve("out.img")));
        assertTrue(Files.readString(dir.resolve("progress.txt")).contains("100.0%"), "the progress bar is on stderr");
    }

    @Test
    void anNbdExportToStandardOutputMatchesNbdcopyAndStandardInputGoesBack() throws Exception {
        ExternalTools.require("nbdcopy", "cmp");
        Path src = image("src.img", 8 * MiB);
        Path served = dir.resolve("served.img");
        Files.copy(src, served);
        try (FileDevice device = FileDevice.open(served, CacheMode.WRITEBACK, StandardOpenOption.READ,
                     StandardOpenOption.WRITE);
             NbdServer server = NbdServer.builder().export("", device).unixSocket(dir.resolve("nbd.sock")).start()) {
            String uri = server.uri();
            bash("$PW copy '" + uri + "' - > ours.img").assertOk("pagewise copy " + uri + " -");
            bash("nbdcopy '" + uri + "' - > reference.img").assertOk("nbdcopy " + uri + " -");
            bash("cmp ours.img reference.img && cmp ours.img src.img").assertOk("the export as streamed");

            // A shorter input: its bytes at the start, the rest of the export as it was.
            byte[] head = new byte[3 * MiB + 1000];
            new Random(1).nextBytes(head);
            Files.write(dir.resolve("head.bin"), head);
            bash("$PW copy - '" + uri + "' < head.bin").assertOk("pagewise copy - " + uri);
            byte[] expected = Files.readAllBytes(src);
            System.arraycopy(head, 0, expected, 0, head.length);
            assertArrayEquals(expected, Files.readAllBytes(served));
        }
    }

    @Test
    void anInputLongerThanAnExistingFileFailsAndKeepsIt() throws Exception {
        Path existing = dir.resolve("small.img");
        Files.write(existing, new byte[MiB]);
        ExternalTools.Result r = bash("$PW copy pattern:4M - | $PW copy - small.img");
        assertEquals(1, r.status(), r.stderr());
        assertTrue(r.stderr().contains("pagewise copy: destination small.img (1048576 bytes) is smaller than the"
                + " input, which goes on past that size; its first 1048576 bytes were written"), r.stderr());
        assertTrue(r.stderr().contains("kept small.img, which existed before the copy"), r.stderr());
        assertEquals(MiB, Files.size(existing), "the file keeps its size");
        try (RandomAccessFile raf = new RandomAccessFile(existing.toFile(), "r")) {
            raf.seek(8);
            assertEquals(8, raf.readLong(), "pattern: the word at offset 8 holds 8");
        }
    }

    @Test
    void aReaderThatGoesAwayFailsTheCopyNamingTheOffset() throws Exception {
        ExternalTools.Result r = bash("$PW copy pattern:1G - 2> err.txt | head -c 100000 > /dev/null");
        String err = Files.readString(dir.resolve("err.txt"));
        assertEquals(1, r.status(), err);
        assertTrue(err.matches("(?s)(.*\n)?pagewise copy: writing the output stream at offset \\d+ failed: .*(Broken pipe|EPIPE).*"),
                err);
        assertFalse(err.contains("WARNING"), err);
    }

    @Test
    void aNewFileFromStandardInputTakesNoDstFilterAndMayBeEmpty() throws Exception {
        // --dst-filter needs a fixed size, which a file growing with the input has not: refused, nothing created.
        ExternalTools.Result refused = bash("$PW copy --dst-filter=readonly - grown.img < /dev/null");
        assertEquals(2, refused.status(), refused.stderr());
        assertTrue(refused.stderr().contains("--dst-filter needs a destination of fixed size"), refused.stderr());
        assertFalse(Files.exists(dir.resolve("grown.img")));
        ExternalTools.Result empty = bash("$PW copy - empty.img < /dev/null");
        empty.assertOk("an empty input");
        assertEquals(0, Files.size(dir.resolve("empty.img")));
    }
}

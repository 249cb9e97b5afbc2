package io.pagewise.nbd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.Native;
import io.pagewise.testing.ExternalTools;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A READ of a sparse file that the server writes itself asks the file nothing but the read: once the server has
 * learned the file's data and hole runs, planning the holes of a structured reply costs no fstat and no lseek.
 * Counted with strace over a child JVM ({@link SparseReadProbe}) that serves the file and reads it through
 * pagewise's own client: 2,000 READs against 20 may cost a handful more metadata calls (the JVM's own), not a few
 * per READ.
 */
@Timeout(300)
class SparseReadCallsTest {
    private static final Pattern CALLS = Pattern.compile("^\\s*[\\d.]+\\s+[\\d.]+\\s+\\d+\\s+(\\d+)\\s+(?:\\d+\\s+)?(\\w+)\\s*$");

    @TempDir
    Path dir;

    @ParameterizedTest
    @ValueSource(strings = {"WRITEBACK", "EVICT"})
    void readsOfAKnownSparseFileMakeNoMetadataCalls(String mode) throws Exception {
        ExternalTools.require("strace");
        if (!Native.isAvailable()) ExternalTools.unavailable("native library not loaded", "the calls counted are its");
        long few = metadataCalls(mode, 20);
        long many = metadataCalls(mode, 2020);
        assertTrue(many - few < 200, mode + ": 2,000 more sparse READs made " + (many - few)
                + " more fstat/lseek calls (" + few + " for 20 READs, " + many + " for 2,020)");
    }

    /** The lseek, fstat and newfstatat calls of a child JVM making reads READs, all its threads counted. */
    private long metadataCalls(String mode, int reads) throws Exception {
        Path summary = dir.resolve("strace-" + mode + "-" + reads + ".txt");
        List<String> command = List.of("strace", "-f", "-c", "-o", summary.toString(),
                "-e", "trace=lseek,fstat,newfstatat,statx",
                Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xshare:auto",
                "--enable-native-access=ALL-UNNAMED",
                "-cp", classes(Native.class) + File.pathSeparator + classes(SparseReadProbe.class),
                SparseReadProbe.class.getName(), dir.toString(), mode, Integer.toString(reads));
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        process.getOutputStream().close();
        String output = new String(process.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        assertTrue(process.waitFor(240, java.util.concurrent.TimeUnit.SECONDS), "child JVM did not finish");
        assertEquals(0, process.exitValue(), output);
        assertTrue(output.contains("reads=" + reads), output);
        long calls = 0;
        for (String line : Files.readAllLines(summary)) {
            Matcher m = CALLS.matcher(line);
            if (m.matches() && !m.group(2).equals("total")) calls += Long.parseLong(m.group(1));
        }
        assertTrue(calls > 0, "strace counted no calls:\n" + Files.readString(summary));
        return calls;
    }

    private static String classes(Class<?> type) throws Exception {
        return Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
    }
}

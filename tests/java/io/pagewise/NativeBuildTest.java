package io.pagewise;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.testing.ExternalTools;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * native/build.sh on a host without the aarch64 cross compiler: the jar then carries this host's library alone, and
 * the build says so in one line that bin/pagewise can pass on.
 */
@Timeout(180)
@Tag("jni")
class NativeBuildTest {
    private static final Path PROJECT = Path.of(System.getProperty("user.dir"));
    private static final String WARNING = "pagewise: WARNING: ";

    @TempDir
    Path tmp;

    /** A directory of links to every program on PATH except the aarch64 cross tools. */
    private Path pathWithoutCrossCompiler() throws Exception {
        Path bin = Files.createDirectories(tmp.resolve("bin"));
        for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            if (dir.isEmpty() || !Files.isDirectory(Path.of(dir))) continue;
            try (Stream<Path> programs = Files.list(Path.of(dir))) {
                for (Path program : (Iterable<Path>) programs::iterator) {
                    String name = program.getFileName().toString();
                    Path link = bin.resolve(name);
                    if (name.startsWith("aarch64-linux-gnu-") || Files.exists(link, LinkOption.NOFOLLOW_LINKS)) {
                        continue;
                    }
                    Files.createSymbolicLink(link, program.toAbsolutePath());
                }
            }
        }
        return bin;
    }

    @Test
    void withoutTheCrossCompilerTheBuildCarriesThisHostAloneAndWarnsInOneLine() throws Exception {
        ExternalTools.require("cmake", "cc");
        Path output = tmp.resolve("native");
        // What an earlier build with the cross compiler left: it must not go into this jar.
        Path stale = Files.createDirectories(output.resolve("linux-aarch64")).resolve("libpagewise.so");
        Files.writeString(stale, "an earlier build's library\n");

        ProcessBuilder builder = new ProcessBuilder("bash", PROJECT.resolve("native/build.sh").toString(),
                PROJECT.toString(), tmp.resolve("build").toString(), output.toString(), System.getProperty("java.home"));
        builder.environment().put("PATH", pathWithoutCrossCompiler().toString());
        builder.environment().remove("CI"); // under CI=true a missing cross compiler fails the build instead
        builder.redirectOutput(tmp.resolve("stdout").toFile()).redirectError(tmp.resolve("stderr").toFile());
        Process process = builder.start();
        try {
            assertTrue(process.waitFor(150, TimeUnit.SECONDS), "native/build.sh did not finish");
        } finally {
            process.destroyForcibly();
        }
        String stderr = Files.readString(tmp.resolve("stderr"), StandardCharsets.UTF_8);
        assertEquals(0, process.exitValue(), "native/build.sh failed:\n" + Files.readString(tmp.resolve("stdout"))
                + stderr);

        List<String> warnings = stderr.lines().filter(line -> line.contains("WARNING")).toList();
        assertEquals(1, warnings.size(), "one warning line:\n" + stderr);
        String warning = warnings.get(0);
        assertTrue(warning.startsWith(WARNING + "this jar carries the native library for " + Native.platform()
                + " alone: "), warning);
        if (Native.platform().equals("linux-x86_64")) {
            assertTrue(warning.endsWith(": linux-aarch64 is not built, which needs aarch64-linux-gnu-gcc (Debian"
                    + " packages gcc-aarch64-linux-gnu libc6-dev-arm64-cross)"), warning);
        }
        assertTrue(Files.isRegularFile(output.resolve(Native.platform()).resolve("libpagewise.so")));
        assertFalse(Files.exists(stale), "the earlier build's linux-aarch64 library is left for the jar");
    }
}

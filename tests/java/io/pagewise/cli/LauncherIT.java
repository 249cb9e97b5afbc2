package io.pagewise.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.testing.ExternalTools;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The packaged jar and {@code bin/pagewise} as a user runs them, on the JVM running the tests (CI runs this on
 * JDK 17 and again on JDK 25): they start warning-free, and the launcher builds the jar when there is none.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class LauncherIT {
    private static final Path PROJECT = Path.of(System.getProperty("user.dir"));
    private static final String JAVA_HOME = System.getProperty("java.home");

    @TempDir
    Path dir;

    private static Path jar() {
        Path jar = Path.of(System.getProperty("pagewise.jar", ""));
        assertTrue(Files.isRegularFile(jar), "the packaged jar (system property pagewise.jar) is missing: " + jar);
        return jar;
    }

    private static void assertNoWarnings(ExternalTools.Result result, String what) {
        result.assertOk(what);
        assertFalse(result.stderr().contains("WARNING"), what + " printed JVM warnings:\n" + result.stderr());
    }

    @Test
    void theJarDeclaresNativeAccessAndRunsWithoutWarnings() throws IOException {
        try (JarFile jar = new JarFile(jar().toFile())) {
            assertEquals("ALL-UNNAMED", jar.getManifest().getMainAttributes().getValue("Enable-Native-Access"));
        }
        ExternalTools.Result version = ExternalTools.run(60, JAVA_HOME + "/bin/java", "-jar", jar().toString(), "--version");
        assertNoWarnings(version, "java -jar pagewise.jar --version");
        assertTrue(version.stdout().contains("native library: loaded"), version.stdout());
        assertNoWarnings(ExternalTools.run(60, JAVA_HOME + "/bin/java", "-jar", jar().toString(), "cachestats",
                jar().toString()), "java -jar pagewise.jar cachestats");
    }

    @Test
    void binPagewiseRunsWithoutWarnings() throws IOException {
        Path launcher = PROJECT.resolve("bin/pagewise");
        Map<String, String> env = Map.of("JAVA_HOME", JAVA_HOME, "PAGEWISE_JAR", jar().toString());
        assertNoWarnings(ExternalTools.run(env, 60, launcher.toString(), "--version"), "bin/pagewise --version");
        assertNoWarnings(ExternalTools.run(env, 60, launcher.toString(), "copy", "pattern:4M", "null:"),
                "bin/pagewise copy pattern:4M null:");
        // copy SRC - writes the bytes to the launcher's standard output, a pipe here.
        ExternalTools.Result streamed = ExternalTools.run(env, 60, "bash", "-c",
                "set -o pipefail; \"$0\" copy pattern:4M - | wc -c", launcher.toString());
        assertNoWarnings(streamed, "bin/pagewise copy pattern:4M - | wc -c");
        assertEquals("4194304", streamed.stdout().strip());
    }

    /**
     * Under the C locale (a systemd service starts without LANG) the JVM encodes file names as ASCII and cannot name
     * 'disk é.img': the launcher runs it under UTF-8, and {@code java -jar} says what to do instead of a stack trace.
     * The name is made by the shell, so that the test's own locale does not matter.
     */
    @Test
    void aNonAsciiFileNameWorksUnderTheCLocale() throws IOException {
        String script = "cd \"$0\" && name=\"disk $(printf '\\303\\251').img\" && printf data > \"$name\""
                + " && env -u LANG -u LC_CTYPE LC_ALL=C \"$1\" checksum \"$name\""
                + " && env -u LANG -u LC_CTYPE LC_ALL=C \"$2\" -jar \"$3\" checksum \"$name\"";
        ExternalTools.Result result = ExternalTools.run(Map.of("JAVA_HOME", JAVA_HOME, "PAGEWISE_JAR", jar().toString()),
                60, "bash", "-c", script, dir.toString(), PROJECT.resolve("bin/pagewise").toString(),
                JAVA_HOME + "/bin/java", jar().toString());
        assertTrue(result.stdout().contains("  disk \u00e9.img"), "bin/pagewise checksum under LC_ALL=C: " + result.stdout()
                + result.stderr());
        assertEquals(2, result.status(), "java -jar under LC_ALL=C: " + result.stderr());
        assertTrue(result.stderr().contains("cannot be encoded in this locale's character set (ANSI_X3.4-1968); run under"
                + " a UTF-8 locale (LC_ALL=C.UTF-8"), result.stderr());
        assertFalse(result.stderr().contains("Exception"), result.stderr());
    }

    /**
     * A fresh clone has no target/ at all: the launcher must notice there is no jar and build one. Here a stand-in
     * {@code mvn} on PATH "builds" by copying the real jar, so the test checks the launcher's logic in seconds.
     */
    @Test
    void binPagewiseBuildsTheJarWhenTargetHasNone() throws IOException {
        Path root = dir.resolve("clone");
        Files.createDirectories(root.resolve("bin"));
        Files.createDirectories(root.resolve("java"));
        Files.copy(PROJECT.resolve("bin/pagewise"), root.resolve("bin/pagewise"));
        Files.writeString(root.resolve("pom.xml"), "<project/>\n");
        Path fakeBin = Files.createDirectories(dir.resolve("fake-bin"));
        Path mvn = fakeBin.resolve("mvn");
        Files.writeString(mvn, "#!/bin/sh\nmkdir -p '" + root + "/target' && cp '" + jar() + "' '" + root
                + "/target/pagewise-0.0.0.jar'\n");
        Files.setPosixFilePermissions(mvn, PosixFilePermissions.fromString("rwxr-xr-x"));
        Map<String, String> env = Map.of("JAVA_HOME", JAVA_HOME, "PATH", fakeBin + ":" + System.getenv("PATH"));

        ExternalTools.Result first = ExternalTools.run(env, 60, root.resolve("bin/pagewise").toString(), "--version");
        first.assertOk("bin/pagewise --version on a checkout with no target/");
        assertTrue(first.stderr().contains("building the jar"), first.stderr());
        assertTrue(first.stdout().startsWith("pagewise "), first.stdout());
        assertTrue(Files.exists(root.resolve("target/pagewise-0.0.0.jar")));

        ExternalTools.Result second = ExternalTools.run(env, 60, root.resolve("bin/pagewise").toString(), "--version");
        second.assertOk("bin/pagewise --version once the jar is built");
        assertFalse(second.stderr().contains("building the jar"), "built again although the jar is fresh: " + second.stderr());
    }
}

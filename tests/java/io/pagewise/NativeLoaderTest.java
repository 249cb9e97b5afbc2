package io.pagewise;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * How the library finds libpagewise.so, checked in child JVMs (the library loads once per JVM): an explicit
 * {@code -Dpagewise.native.path}, a bad one, and the default copy from the class path, which must not leave its
 * temporary file behind; and the load message, which names the platforms whose library the class path carries.
 */
@Timeout(120)
@Tag("jni")
class NativeLoaderTest {
    @TempDir
    Path tmp;

    private static Path classesDir(Class<?> type) throws Exception {
        return Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI());
    }

    private static Path builtLibrary() throws Exception {
        Path library = classesDir(Native.class).resolve("native").resolve(Native.platform()).resolve("libpagewise.so");
        assertTrue(Files.isRegularFile(library), "the build puts the library at " + library);
        return library;
    }

    /** Runs the probe in a child JVM with its own java.io.tmpdir; returns its key=value output. */
    private Map<String, String> probe(Path tmpdir, Path workDir, String... properties) throws Exception {
        Files.createDirectories(tmpdir);
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("-Djava.io.tmpdir=" + tmpdir);
        command.addAll(List.of(properties));
        command.add("-cp");
        command.add(classesDir(Native.class) + File.pathSeparator + classesDir(NativeLoaderProbe.class));
        command.add(NativeLoaderProbe.class.getName());
        command.add(tmp.toString());
        Process process = new ProcessBuilder(command).directory(workDir.toFile()).redirectErrorStream(true).start();
        process.getOutputStream().close();
        String output;
        try {
            output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(process.waitFor(60, TimeUnit.SECONDS), "child JVM did not finish");
        } finally {
            process.destroyForcibly();
        }
        assertEquals(0, process.exitValue(), "child JVM failed:\n" + output);
        Map<String, String> values = new HashMap<>();
        for (String line : output.split("\n")) {
            int eq = line.indexOf('=');
            if (eq > 0) values.put(line.substring(0, eq), line.substring(eq + 1));
        }
        assertTrue(values.containsKey("available") && values.containsKey("io"), "probe output:\n" + output);
        return values;
    }

    /**
     * A copy of the library's classes whose native/ holds the given platforms' libraries alone, as a jar built
     * without the cross compiler holds linux-x86_64 alone.
     */
    private Path classesCarrying(List<String> platforms) throws Exception {
        Path from = classesDir(Native.class);
        Path to = tmp.resolve("classes");
        try (Stream<Path> files = Files.walk(from)) {
            for (Path file : (Iterable<Path>) files::iterator) {
                Path relative = from.relativize(file);
                if (relative.getNameCount() >= 2 && relative.getName(0).toString().equals("native")
                        && !platforms.contains(relative.getName(1).toString())) {
                    continue;
                }
                Path target = to.resolve(relative.toString());
                if (Files.isDirectory(file)) Files.createDirectories(target);
                else Files.copy(file, target);
            }
        }
        return to;
    }

    /** {@code pagewise --version} in a child JVM on classes; returns what it printed. */
    private static String version(Path classes, String... properties) throws Exception {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(List.of(properties));
        command.addAll(List.of("-cp", classes.toString(), "io.pagewise.cli.Main", "--version"));
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        process.getOutputStream().close();
        try {
            String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(process.waitFor(60, TimeUnit.SECONDS), "child JVM did not finish");
            assertEquals(0, process.exitValue(), "pagewise --version failed:\n" + output);
            return output;
        } finally {
            process.destroyForcibly();
        }
    }

    @Test
    void theLoadMessageNamesOnlyThePlatformsTheJarCarries() throws Exception {
        builtLibrary();
        String output = version(classesCarrying(List.of(Native.platform())), "-Dpagewise.native=false");
        assertTrue(output.contains("not loaded on " + Native.platform() + ": disabled by -Dpagewise.native=false. The"
                + " jar carries it for " + Native.platform() + " with glibc 2.17 or later. Without it"), output);
        for (String other : List.of("linux-x86_64", "linux-aarch64")) {
            if (!other.equals(Native.platform())) assertFalse(output.contains(other), "names " + other + ": " + output);
        }
    }

    @Test
    void aJarWithoutTheLibrarySaysItCarriesNone() throws Exception {
        String output = version(classesCarrying(List.of()));
        assertTrue(output.contains("not loaded on " + Native.platform() + ": the jar has no native library for "
                + Native.platform()), output);
        assertTrue(output.contains(". The jar carries it for no platform. Without it WRITEBACK"), output);
    }

    private static List<String> leftovers(Path dir) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.map(p -> p.getFileName().toString()).filter(n -> n.startsWith("libpagewise")).toList();
        }
    }

    @Test
    void anExplicitLibraryPathLoads() throws Exception {
        Path tmpdir = tmp.resolve("child-tmp");
        Map<String, String> out = probe(tmpdir, tmp, "-Dpagewise.native.path=" + builtLibrary());
        assertEquals("true", out.get("available"), out.toString());
        assertEquals("", out.get("error"));
        assertEquals("true,EVICT,4,13", out.get("io"), "native I/O works");
        assertEquals(List.of(), leftovers(tmpdir), "an explicit path is loaded in place, nothing is extracted");
    }

    @Test
    void aRelativeLibraryPathIsResolvedAgainstTheWorkingDirectory() throws Exception {
        Path library = builtLibrary();
        Path workDir = classesDir(Native.class);
        Map<String, String> out = probe(tmp.resolve("child-tmp"), workDir,
                "-Dpagewise.native.path=" + workDir.relativize(library));
        assertEquals("true", out.get("available"), out.toString());
    }

    @Test
    void aBadLibraryPathIsALoadErrorNamingThePath() throws Exception {
        Path missing = tmp.resolve("no-such-dir/libpagewise.so");
        Path notALibrary = tmp.resolve("not-a-library.so");
        Files.writeString(notALibrary, "this is not an ELF file\n");
        for (Path bad : new Path[] {missing, notALibrary}) {
            Map<String, String> out = probe(tmp.resolve("child-tmp"), tmp, "-Dpagewise.native.path=" + bad);
            assertEquals("false", out.get("available"), out.toString());
            assertTrue(out.get("error").contains(bad.toString()), "the error names the path: " + out.get("error"));
            assertTrue(out.get("error").contains("not loaded on " + Native.platform()), "and the platform: " + out.get("error"));
            assertTrue(out.get("error").contains("DIRECT, DIRECTSYNC, EVICT, DONTCACHE and page-cache residency need it"),
                    "and what needs it: " + out.get("error"));
            assertEquals("false,WRITEBACK,4,13", out.get("io"), "the pure-Java path takes over");
        }
    }

    @Test
    void theDefaultCopyFromTheClassPathLeavesNoTemporaryFile() throws Exception {
        Path tmpdir = tmp.resolve("private-tmp");
        Map<String, String> out = probe(tmpdir, tmp);
        assertEquals("true", out.get("available"), out.toString());
        assertEquals("true,EVICT,4,13", out.get("io"));
        assertEquals("", out.get("leftovers"), "the extracted copy is deleted as soon as it is loaded");
        assertEquals(List.of(), leftovers(tmpdir), "nothing left after the JVM exits");
    }
}

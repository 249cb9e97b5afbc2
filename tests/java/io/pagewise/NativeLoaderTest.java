package io.pagewise;

import static org.junit.jupiter.api.Assertions.assertEquals;
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
 * temporary file behind.
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

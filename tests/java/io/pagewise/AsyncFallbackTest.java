package io.pagewise;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.testing.ExternalTools;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Where io_uring is refused, as a container's seccomp profile refuses it, asynchronous I/O runs on the thread pool,
 * says so, and every cache mode still stores and returns its bytes. The refusal is the kernel's: a child JVM runs
 * under a seccomp filter (tests/native/refuse_io_uring.c, built here) that fails io_uring_setup with EPERM.
 */
@Timeout(120)
class AsyncFallbackTest {
    @TempDir
    Path dir;

    @Test
    void refusedIoUringFallsBackToThreads() throws Exception {
        ExternalTools.require("gcc");
        Path refuse = dir.resolve("refuse_io_uring");
        List<String> build = List.of("gcc", "-Wall", "-Wextra", "-Werror", "-o", refuse.toString(),
                Path.of("tests/native/refuse_io_uring.c").toAbsolutePath().toString());
        assertEquals("", run(build, 0), "gcc");
        List<String> command = new ArrayList<>(List.of(refuse.toString()));
        command.addAll(probe());
        String output = run(command, 0);
        assertTrue(output.contains("path=threads (io_uring_setup: EPERM)"), output);
        assertTrue(output.contains("ok"), output);
    }

    @Test
    void threadsCanBeAskedFor() throws Exception {
        List<String> command = probe();
        command.add(1, "-Dpagewise.async=threads");
        String output = run(command, 0);
        assertTrue(output.contains("path=threads (-Dpagewise.async=threads)"), output);
        assertTrue(output.contains("ok"), output);
    }

    private List<String> probe() {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("--enable-native-access=ALL-UNNAMED");
        command.add("-XX:+IgnoreUnrecognizedVMOptions");
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(AsyncFallbackProbe.class.getName());
        command.add(dir.toString());
        return command;
    }

    private static String run(List<String> command, int expectedExit) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        try {
            assertTrue(process.waitFor(60, TimeUnit.SECONDS), "timed out: " + command);
            String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertEquals(expectedExit, process.exitValue(), command + ":\n" + output);
            return output;
        } finally {
            process.destroyForcibly();
        }
    }
}

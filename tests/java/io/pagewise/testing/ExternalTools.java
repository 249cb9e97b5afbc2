package io.pagewise.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import io.pagewise.Native;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;

/**
 * External programs the tests drive (NBD clients, vmtouch) and other prerequisites (the native library, IPv6).
 * Whatever is missing skips the test with a message, except under {@code CI=true}, where it fails it: CI must run
 * everything. Tests skip only through {@link #unavailable}, never with a bare assumption or an early return.
 */
public final class ExternalTools {
    private static String python;

    private ExternalTools() {}

    /** The output of a finished command. */
    public record Result(int status, String stdout, String stderr) {
        public Result assertOk(String what) {
            if (status != 0) fail(what + " exited with " + status + "\nstdout:\n" + stdout + "\nstderr:\n" + stderr);
            return this;
        }
    }

    /** Skips (or, on CI, fails) the calling test unless every named program is on PATH. */
    public static void require(String... programs) {
        for (String program : programs) {
            if (findOnPath(program) == null) missing(program + " (not on PATH)");
        }
    }

    /** Skips (or, on CI, fails) the calling test unless the native library is loaded. */
    public static void requireNativeLibrary() {
        if (!Native.isAvailable()) {
            unavailable("native library not loaded: " + Native.loadError(), "the native library must build and load");
        }
    }

    /** /dev/shm, a tmpfs (which refuses RWF_DONTCACHE), or skips/fails. */
    public static Path tmpfs() throws IOException {
        Path shm = Path.of("/dev/shm");
        if (!Files.isDirectory(shm) || !"tmpfs".equals(Files.getFileStore(shm).type())) {
            unavailable(shm + " is not a tmpfs", "the fallback from RWF_DONTCACHE must be tested");
        }
        return shm;
    }

    /** Where {@code ../shared/tools/blkhash/build.sh} puts blksum when given no output directory. */
    private static final Path BLKSUM_BUILD = Path.of("/tmp/blkhash-build/build/bin/blksum");

    /**
     * blksum, the reference for blkhash checksums: {@code $PAGEWISE_BLKSUM}, else the default output of
     * {@code ../shared/tools/blkhash/build.sh}, else {@code blksum} on PATH; or skips (fails under CI=true).
     */
    public static Path blksum() {
        String configured = System.getenv("PAGEWISE_BLKSUM");
        if (configured != null && !configured.isEmpty()) {
            Path path = Path.of(configured);
            if (!Files.isExecutable(path)) unavailable("PAGEWISE_BLKSUM=" + configured + " is not an executable",
                    "the checksum tests compare with blksum");
            return path;
        }
        if (Files.isExecutable(BLKSUM_BUILD)) return BLKSUM_BUILD;
        Path onPath = findOnPath("blksum");
        if (onPath != null) return onPath;
        Path script = Path.of(System.getProperty("user.dir")).resolve("../shared/tools/blkhash/build.sh").normalize();
        unavailable("blksum is not built: run bash " + script + " and set PAGEWISE_BLKSUM to the path it prints",
                "the checksum tests compare with blksum");
        return null;
    }

    /** A python3 that can {@code import nbd} (python3-libnbd), or skips/fails. */
    public static synchronized String python() {
        if (python != null) return python;
        for (String candidate : List.of("/usr/bin/python3", "python3")) {
            try {
                if (run(Map.of(), 30, candidate, "-c", "import nbd").status() == 0) return python = candidate;
            } catch (IOException e) {
                // try the next one
            }
        }
        missing("python3 with the nbd module (python3-libnbd)");
        return null;
    }

    /**
     * The command that runs program from the newest NBD tools (libnbd 1.22, qemu 10, nbdkit 1.42), which live in a
     * Debian trixie root beside the system's older ones: {@code chroot ROOT program}, ROOT being
     * {@code PAGEWISE_NBD_TOOLS_ROOT} or /opt/trixie (it shares /tmp, so Unix sockets under /tmp work both ways).
     * Skips, or fails under CI=true, where the root, the program or the right to chroot is missing.
     */
    public static List<String> newest(String program) {
        String root = System.getenv().getOrDefault("PAGEWISE_NBD_TOOLS_ROOT", "/opt/trixie");
        if (!Files.isExecutable(Path.of(root, "usr/bin", program))) {
            unavailable("newest NBD tools: no " + program + " in " + root + "/usr/bin (set PAGEWISE_NBD_TOOLS_ROOT)",
                    "extended headers must be tested against libnbd >= 1.18 and qemu >= 8.2");
        }
        if (findOnPath("chroot") == null || !"root".equals(System.getProperty("user.name"))) {
            unavailable("newest NBD tools: running them in " + root + " needs chroot and root",
                    "extended headers must be tested against libnbd >= 1.18 and qemu >= 8.2");
        }
        return List.of("chroot", root, program);
    }

    private static void missing(String what) {
        unavailable("external program missing: " + what, "every program must be installed");
    }

    /** Skips the calling test with a visible message, or fails it under CI=true, where (why) it must run. */
    public static void unavailable(String message, String why) {
        if ("true".equals(System.getenv("CI"))) fail(message + " (CI=true: " + why + ")");
        System.err.println("SKIPPED: " + message);
        Assumptions.abort(message);
    }

    private static Path findOnPath(String program) {
        for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            Path candidate = Path.of(dir, program);
            if (Files.isExecutable(candidate)) return candidate;
        }
        return null;
    }

    /** Runs a command with extra environment, killing it after timeoutSeconds. */
    public static Result run(Map<String, String> env, int timeoutSeconds, String... command) throws IOException {
        ProcessBuilder builder = new ProcessBuilder(command);
        builder.environment().putAll(env);
        Path out = Files.createTempFile("pagewise-test-", ".out");
        Path err = Files.createTempFile("pagewise-test-", ".err");
        builder.redirectOutput(out.toFile()).redirectError(err.toFile()).redirectInput(ProcessBuilder.Redirect.PIPE);
        Process process = builder.start();
        try {
            process.getOutputStream().close();
            if (!process.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
                process.descendants().forEach(ProcessHandle::destroyForcibly);
                process.destroyForcibly();
                process.waitFor(10, TimeUnit.SECONDS);
                fail(String.join(" ", command) + " did not finish in " + timeoutSeconds + " s\nstderr:\n"
                        + Files.readString(err, StandardCharsets.UTF_8));
            }
            return new Result(process.exitValue(), Files.readString(out, StandardCharsets.UTF_8),
                    Files.readString(err, StandardCharsets.UTF_8));
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        } finally {
            Files.deleteIfExists(out);
            Files.deleteIfExists(err);
        }
    }

    public static Result run(int timeoutSeconds, String... command) throws IOException {
        return run(Map.of(), timeoutSeconds, command);
    }

    /** Runs a Python script from tests/nbd/ (relative to the project directory) with $uri set. */
    public static Result pythonScript(String name, String uri, int timeoutSeconds) throws IOException {
        return run(Map.of("uri", uri), timeoutSeconds, python(), nbdScript(name).toString());
    }

    /** {@return the command line that runs a Python script from tests/nbd/, for {@code serve --run}} */
    public static String pythonScriptCommand(String name) {
        return python() + " " + nbdScript(name);
    }

    private static Path nbdScript(String name) {
        return Path.of(System.getProperty("user.dir"), "tests", "nbd", name);
    }

    /**
     * {@return the command that runs command under systemd-socket-activate, which listens on listen (a Unix
     * socket's path, or host:port) and starts command at the first connection, passing it the socket}
     */
    public static List<String> socketActivated(String listen, List<String> command) {
        List<String> all = new ArrayList<>(List.of("systemd-socket-activate", "-l", listen));
        all.addAll(command);
        return all;
    }

    /**
     * Asserts that nbdinfo finds an export of size bytes at uri. The first connection to a socket-activated server
     * starts it, and waits in the backlog meanwhile: hence the minute allowed.
     */
    public static void assertExportSize(String uri, long size) throws IOException {
        String reported = run(60, "nbdinfo", "--size", uri).assertOk("nbdinfo --size " + uri).stdout().trim();
        assertEquals(String.valueOf(size), reported, "the size of " + uri);
    }

    /** Stops a child process: SIGTERM, up to 5 s for it to exit, then SIGKILL and 5 s more. Keeps an interrupt. */
    public static void stop(Process process) {
        ChildProcesses.stop(process);
    }
}

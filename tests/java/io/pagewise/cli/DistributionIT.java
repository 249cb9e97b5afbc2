package io.pagewise.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.pagewise.testing.ExternalTools;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The distribution archive that {@code mvn package} makes, installed as docs/SERVER.md says and run as a service user
 * would: unpacked by {@code nobody} with {@code HOME=/nonexistent}, then owned by root, run from another directory
 * with a PATH that holds java and a few commands (no Maven, cmake or gcc), and served through its own systemd units
 * under {@code systemd-socket-activate}.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class DistributionIT {
    private static final String NOBODY = "65534";
    private static final String JAVA_HOME = System.getProperty("java.home");
    private static final String VERSION = Main.version();

    private Path base;

    @BeforeEach
    void openDirectory() throws IOException {
        // Under /tmp, not JUnit's @TempDir, whose directory (mode 700) nobody could not enter.
        base = Files.createTempDirectory(Path.of("/tmp"), "pagewise-distribution-");
        Files.setPosixFilePermissions(base, PosixFilePermissions.fromString("rwxr-xr-x"));
    }

    @AfterEach
    void removeDirectory() throws IOException {
        if (base != null) ExternalTools.run(60, "rm", "-rf", base.toString());
    }

    private static Path archive() {
        Path archive = Path.of(System.getProperty("pagewise.distribution", ""));
        assertTrue(Files.isRegularFile(archive), "mvn package made no distribution archive (system property"
                + " pagewise.distribution): " + archive);
        return archive;
    }

    private static String onPath(String program) throws IOException {
        ExternalTools.require(program);
        return ExternalTools.run(10, "bash", "-c", "command -v " + program).assertOk("command -v " + program).stdout().strip();
    }

    /** The whole PATH a service user gets here: java and the commands bin/pagewise and tar use, nothing that builds. */
    private Path servicePath() throws IOException {
        Path bin = Files.createDirectories(base.resolve("path"));
        Files.createSymbolicLink(bin.resolve("java"), Path.of(JAVA_HOME, "bin", "java"));
        for (String command : List.of("bash", "dirname", "readlink", "tar", "gzip")) {
            Files.createSymbolicLink(bin.resolve(command), Path.of(onPath(command)));
        }
        return bin;
    }

    /** The command, run as nobody (in a process given {@link #serviceEnvironment}). */
    private static List<String> asNobody(String... command) throws IOException {
        List<String> full = new ArrayList<>(List.of(onPath("setpriv"), "--reuid=" + NOBODY, "--regid=" + NOBODY,
                "--clear-groups"));
        full.addAll(List.of(command));
        return full;
    }

    /** Nothing of this JVM's environment but HOME=/nonexistent and PATH, as a service user gets. */
    private static ProcessBuilder serviceEnvironment(ProcessBuilder builder, Path path, Path workingDirectory) {
        builder.environment().clear();
        builder.environment().putAll(Map.of("HOME", "/nonexistent", "PATH", path.toString()));
        return builder.directory(workingDirectory.toFile());
    }

    private static ExternalTools.Result run(Path workingDirectory, Path path, List<String> command)
            throws IOException, InterruptedException {
        Path out = Files.createTempFile("pagewise-test-", ".out");
        Path err = Files.createTempFile("pagewise-test-", ".err");
        try {
            Process process = serviceEnvironment(new ProcessBuilder(command), path, workingDirectory)
                    .redirectOutput(out.toFile()).redirectError(err.toFile()).start();
            if (!process.waitFor(60, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                fail(command + " did not finish in 60 s");
            }
            return new ExternalTools.Result(process.exitValue(), Files.readString(out), Files.readString(err));
        } finally {
            Files.deleteIfExists(out);
            Files.deleteIfExists(err);
        }
    }

    /** Unpacks the archive as nobody, then gives it to root: the service user can read the install, not change it. */
    private Path install(Path path) throws Exception {
        Path archive = Files.copy(archive(), base.resolve(archive().getFileName()));
        Path unpacked = Files.createDirectories(base.resolve("opt"));
        ExternalTools.run(10, "chown", NOBODY + ":" + NOBODY, unpacked.toString()).assertOk("chown");
        run(unpacked, path, asNobody("tar", "-xzf", archive.toString())).assertOk("tar -xzf as nobody");
        ExternalTools.run(30, "chown", "-R", "root:root", unpacked.toString()).assertOk("chown -R root");
        Path install = unpacked.resolve("pagewise-" + VERSION);
        assertTrue(Files.isDirectory(install), "the archive's top directory is pagewise-" + VERSION);
        return install;
    }

    @Test
    void theArchiveRunsAsAServiceUserWithoutBuildingAndServesThroughItsUnits() throws Exception {
        if (ServeOptions.effectiveUid() != 0) {
            ExternalTools.unavailable("running as nobody needs root", "the CI runs as root");
        }
        ExternalTools.require("setpriv", "systemd-socket-activate", "nbdinfo", "tar");
        Path path = servicePath();
        Path install = install(path);
        for (String file : List.of("bin/pagewise", "lib/pagewise.jar", "LICENSE", "README.md", "CHANGELOG.md", "docs/SERVER.md",
                "docs/COPY.md", "docs/systemd/pagewise-nbd.service", "docs/systemd/pagewise-nbd.socket")) {
            assertTrue(Files.isRegularFile(install.resolve(file)), file + " is in the archive");
        }
        assertTrue(Files.isExecutable(install.resolve("bin/pagewise")));
        assertFalse(Files.exists(install.resolve("pom.xml")), "the archive is no checkout");

        // From another directory, through a link on PATH, as a command installed with ln -s would be.
        Files.createSymbolicLink(path.resolve("pagewise"), install.resolve("bin/pagewise"));
        ExternalTools.Result version = run(Path.of("/"), path, asNobody("pagewise", "--version"));
        version.assertOk("pagewise --version as nobody");
        assertTrue(version.stdout().startsWith("pagewise " + VERSION + " (native library: loaded"), version.stdout());
        assertEquals("", version.stderr(), "nothing built, nothing warned");
        assertFalse(Files.exists(install.resolve("target")));

        serveThroughTheUnits(install, path);
    }

    /** The archive's units as systemd runs them: its socket, its ExecStart as nobody in place of User=pagewise. */
    private void serveThroughTheUnits(Path install, Path path) throws Exception {
        String socketUnit = Files.readString(install.resolve("docs/systemd/pagewise-nbd.socket"));
        String serviceUnit = Files.readString(install.resolve("docs/systemd/pagewise-nbd.service"));
        Matcher listen = Pattern.compile("(?m)^ListenStream=(127\\.0\\.0\\.1):(\\d+)$").matcher(socketUnit);
        assertTrue(listen.find(), socketUnit);
        Matcher user = Pattern.compile("(?m)^User=(\\S+)$").matcher(serviceUnit);
        assertTrue(user.find() && !user.group(1).equals("root"), "the service runs unprivileged: " + serviceUnit);
        Matcher exec = Pattern.compile("(?m)^ExecStart=((?:.*\\\\\n)*.*)$").matcher(serviceUnit);
        assertTrue(exec.find(), serviceUnit);
        List<String> execStart = List.of(exec.group(1).replace("\\\n", " ").trim().split("\\s+"));
        assertEquals("/opt/pagewise/bin/pagewise", execStart.get(0), "the units expect the archive at /opt/pagewise");

        Path images = Files.createDirectories(base.resolve("images"));
        try (RandomAccessFile raf = new RandomAccessFile(images.resolve("vm1.img").toFile(), "rw")) {
            raf.setLength(1 << 20);
        }
        ExternalTools.run(10, "chown", "-R", NOBODY + ":" + NOBODY, images.toString()).assertOk("chown images");
        int port = freePort();
        List<String> command = new ArrayList<>(List.of(onPath("systemd-socket-activate"), "-l",
                listen.group(1) + ":" + port));
        command.addAll(asNobody(install + execStart.get(0).substring("/opt/pagewise".length())));
        for (String arg : execStart.subList(1, execStart.size())) {
            if (arg.startsWith("--dir=")) arg = "--dir=" + images;
            if (arg.startsWith("--metrics=")) arg = "--metrics=127.0.0.1:" + freePort();
            command.add(arg);
        }
        Path err = base.resolve("serve.err");
        Process server = serviceEnvironment(new ProcessBuilder(command), path, Path.of("/"))
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectError(err.toFile()).start();
        try {
            awaitListening(port, server, err);
            // The first connection starts the service (systemd-socket-activate execs it then).
            ExternalTools.Result size = ExternalTools.run(60, "nbdinfo", "--size", "nbd://127.0.0.1:" + port + "/vm1.img");
            size.assertOk("nbdinfo on the unit's socket: " + Files.readString(err));
            assertEquals(String.valueOf(1 << 20), size.stdout().strip());
            String status = Files.readString(Path.of("/proc", String.valueOf(server.pid()), "status"));
            assertTrue(status.contains("\nUid:\t" + NOBODY + "\t"), "the server runs as nobody:\n" + status);
        } finally {
            ExternalTools.stop(server);
        }
        String log = Files.readString(err);
        assertFalse(log.contains("<3>") || log.contains("WARNING") || log.contains("building"), log);
    }

    private static int freePort() throws IOException {
        try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return probe.getLocalPort();
        }
    }

    private static void awaitListening(int port, Process process, Path err) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!Files.readString(err).contains("Listening on")) {
            if (!process.isAlive() || System.nanoTime() > deadline) {
                fail("systemd-socket-activate never listened on " + port + ": " + Files.readString(err));
            }
            Thread.sleep(20);
        }
    }
}

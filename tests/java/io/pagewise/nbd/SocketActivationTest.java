package io.pagewise.nbd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.pagewise.testing.ExternalTools;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The server as a service: on the socket systemd passes (run under systemd-socket-activate, TCP and Unix), and
 * ending with its parent. The server runs in a JVM of its own ({@link io.pagewise.testing.ServiceMain}).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class SocketActivationTest {
    @TempDir
    Path dir;

    private List<String> java(String... args) {
        String java = ProcessHandle.current().info().command().orElse("java");
        List<String> command = new ArrayList<>(List.of(java, "--enable-native-access=ALL-UNNAMED", "-cp",
                System.getProperty("java.class.path"), "io.pagewise.testing.ServiceMain"));
        command.addAll(List.of(args));
        return command;
    }

    private Process start(List<String> command) throws Exception {
        return new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(dir.resolve("child.log").toFile()).start();
    }

    private void awaitListening(Path unixSocket, Process process) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!Files.exists(unixSocket)) {
            if (!process.isAlive() || System.nanoTime() > deadline) fail(unixSocket + " never appeared: " + log());
            Thread.sleep(20);
        }
    }

    private String log() throws Exception {
        Path log = dir.resolve("child.log");
        return Files.exists(log) ? Files.readString(log) : "";
    }

    @Test
    void servesOnTheUnixSocketSystemdPassesAndLeavesItsFile() throws Exception {
        ExternalTools.require("systemd-socket-activate", "nbdinfo");
        Path socket = dir.resolve("act.sock");
        Path ready = dir.resolve("ready");
        Path pidFile = dir.resolve("pagewise.pid");
        Process process = start(ExternalTools.socketActivated(socket.toString(),
                java(ready.toString(), "--activated", "--pidfile=" + pidFile)));
        try {
            awaitListening(socket, process);
            ExternalTools.assertExportSize("nbd+unix:///?socket=" + socket, 1 << 20);
            assertEquals("nbd+unix:///?socket=" + socket, Files.readString(ready).trim(), "the URI names systemd's socket");
            // systemd-socket-activate execs the server: the pid file names the process systemd-socket-activate was.
            assertEquals(process.pid() + "\n", Files.readString(pidFile));
        } finally {
            ExternalTools.stop(process);
        }
        assertTrue(Files.exists(socket), "the socket file is systemd's: the server leaves it");
        assertFalse(log().contains("Exception"), log());
    }

    @Test
    void servesOnATcpSocketSystemdPasses() throws Exception {
        ExternalTools.require("systemd-socket-activate", "nbdinfo");
        int port;
        try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = probe.getLocalPort();
        }
        Path ready = dir.resolve("ready");
        Process process = start(ExternalTools.socketActivated("127.0.0.1:" + port, java(ready.toString(), "--activated")));
        try {
            String size = null;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (size == null) {
                ExternalTools.Result r = ExternalTools.run(60, "nbdinfo", "--size", "nbd://127.0.0.1:" + port + "/");
                if (r.status() == 0) size = r.stdout().trim();
                else if (!process.isAlive() || System.nanoTime() > deadline) fail("nbdinfo: " + r.stderr() + "\n" + log());
                else Thread.sleep(50); // systemd-socket-activate may not listen yet
            }
            assertEquals(String.valueOf(1 << 20), size);
            assertEquals("nbd://127.0.0.1:" + port + "/", Files.readString(ready).trim());
        } finally {
            ExternalTools.stop(process);
        }
    }

    @Test
    void withoutSocketActivationThereIsNoInheritedListener() throws Exception {
        Process process = start(java(dir.resolve("ready").toString(), "--activated"));
        assertTrue(process.waitFor(60, TimeUnit.SECONDS));
        assertEquals(2, process.exitValue(), log());
        assertTrue(log().contains("not socket-activated"), log());
    }

    @Test
    void droppingRootChangesEveryThread() throws Exception {
        ExternalTools.require("nbdinfo");
        if (!"0".equals(String.valueOf(Files.getAttribute(Files.createFile(dir.resolve("mine")), "unix:uid")))) {
            ExternalTools.unavailable("dropping privileges needs root", "the CI runs as root");
        }
        Path socket = dir.resolve("s.sock");
        Path ready = dir.resolve("ready");
        Process process = start(java(ready.toString(), "--user=65534", "--socket=" + socket));
        try {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (!Files.exists(ready)) {
                if (!process.isAlive() || System.nanoTime() > deadline) fail("server never listened: " + log());
                Thread.sleep(20);
            }
            // dropPrivileges runs right after the ready file appears (its first native call may take a while on a
            // busy machine): wait until every thread has changed, or fail with what the threads say at the end.
            List<String> threads = idsOfEveryThread(process.pid());
            while (!threads.stream().allMatch(t -> t.matches("\\d+ (Uid|Gid):\\s+65534\\s+65534\\s+65534\\s+65534"))
                    && System.nanoTime() < deadline) {
                Thread.sleep(50);
                threads = idsOfEveryThread(process.pid());
            }
            assertTrue(threads.size() > 10, "a JVM has many threads: " + threads);
            for (String thread : threads) {
                assertTrue(thread.matches("\\d+ (Uid|Gid):\\s+65534\\s+65534\\s+65534\\s+65534"), "every thread, every id: " + thread);
            }
            // The socket was bound as root; the server still serves on it.
            ExternalTools.run(30, "nbdinfo", "--size", "nbd+unix:///?socket=" + socket).assertOk("nbdinfo after the drop");
        } finally {
            ExternalTools.stop(process);
        }
    }

    @Test
    void exitsWithItsParent() throws Exception {
        Path socket = dir.resolve("s.sock");
        Path ready = dir.resolve("ready");
        // bash starts the server in the background and waits; killing bash must end the server too.
        StringBuilder line = new StringBuilder();
        for (String arg : java(ready.toString(), "--exit-with-parent", "--socket=" + socket)) line.append('\'').append(arg).append("' ");
        Process parent = start(List.of("bash", "-c", line + "& echo $! > '" + dir.resolve("child.pid") + "'; wait"));
        try {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (!Files.exists(ready)) {
                if (!parent.isAlive() || System.nanoTime() > deadline) fail("server never listened: " + log());
                Thread.sleep(20);
            }
            long pid = Long.parseLong(Files.readString(dir.resolve("child.pid")).trim());
            ProcessHandle server = ProcessHandle.of(pid).orElseThrow();
            parent.destroyForcibly();
            parent.waitFor(10, TimeUnit.SECONDS);
            server.onExit().get(30, TimeUnit.SECONDS);
            assertFalse(server.isAlive());
            assertFalse(Files.exists(socket), "SIGTERM ran the shutdown hook, which closed the server and removed its socket");
        } finally {
            ExternalTools.stop(parent);
        }
    }

    /** The Uid: and Gid: lines of every thread of a process, each after its thread id. */
    private static List<String> idsOfEveryThread(long pid) throws IOException {
        List<String> threads = new ArrayList<>();
        try (var tasks = Files.list(Path.of("/proc/" + pid + "/task"))) {
            for (Path task : (Iterable<Path>) tasks::iterator) {
                try {
                    for (String line : Files.readAllLines(task.resolve("status"))) {
                        if (line.startsWith("Uid:") || line.startsWith("Gid:")) threads.add(task.getFileName() + " " + line);
                    }
                } catch (java.nio.file.NoSuchFileException ended) {
                    // a thread that ended meanwhile
                }
            }
        }
        return threads;
    }
}

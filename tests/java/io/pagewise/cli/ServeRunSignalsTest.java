package io.pagewise.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.pagewise.testing.ExternalTools;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code serve --run} and the signals that stop a server: each server runs in a JVM of its own, as bin/pagewise
 * runs it, and gets a real SIGTERM (or SIGHUP) while its command runs. The server passes the signal on to the
 * command's process group, serves until the command is gone, and exits with the command's status; a second signal
 * kills the command. No process of the command is left behind.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ServeRunSignalsTest {
    private static final int SIGHUP = 1;
    private static final int SIGTERM = 15;

    @TempDir
    Path dir;
    private final List<Process> servers = new ArrayList<>();
    /** Process groups of commands, and their processes, to kill should a test fail and leave them. */
    private final List<Long> groups = new ArrayList<>();
    private final List<ProcessHandle> commands = new ArrayList<>();

    @AfterEach
    void stopWhatIsLeft() throws IOException {
        for (Process server : servers) ExternalTools.stop(server);
        for (long group : groups) {
            for (long pid : liveInGroup(group)) ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
        }
        commands.forEach(ProcessHandle::destroyForcibly); // a handle kills only the process it was taken of
    }

    /** The command that starts {@code pagewise serve} in a JVM of its own, as bin/pagewise would. */
    private static List<String> serveCommand(String... args) {
        return CommandRun.inOwnJvm("serve", args);
    }

    private Process start(ProcessBuilder builder) throws IOException {
        Process server = builder.directory(dir.toFile()).redirectOutput(dir.resolve("stdout.txt").toFile())
                .redirectError(dir.resolve("stderr.txt").toFile()).start();
        servers.add(server);
        return server;
    }

    private Process start(String... args) throws IOException {
        return start(new ProcessBuilder(serveCommand(args)));
    }

    private String serverErr() throws IOException {
        Path err = dir.resolve("stderr.txt");
        return Files.exists(err) ? Files.readString(err) : "";
    }

    /** 48 MiB of random bytes: at 8 MiB/s through the rate filter, a copy of about 5 s. */
    private Path randomImage() throws IOException {
        Path image = dir.resolve("data.img");
        byte[] block = new byte[1 << 20];
        Random random = new Random(42);
        try (OutputStream out = Files.newOutputStream(image)) {
            for (int i = 0; i < 48; i++) {
                random.nextBytes(block);
                out.write(block);
            }
        }
        return image;
    }

    /** Waits for the command to write its shell's pid ($$) to the file: that is its process group too, under setsid. */
    private long awaitPid(Path file, Process server) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!Files.exists(file) || !Files.readString(file).endsWith("\n")) {
            if (!server.isAlive() || System.nanoTime() > deadline) fail(file + " never appeared: " + serverErr());
            Thread.sleep(20);
        }
        long pid = Long.parseLong(Files.readString(file).trim());
        groups.add(pid);
        return pid;
    }

    /**
     * Waits for a process named program under the command's shell (nbdcopy started, sleep started). {@return the
     * shell and every process under it then}, to check that none is left at the end
     */
    private List<Long> awaitUnder(long shell, String program, Process server) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            List<ProcessHandle> handles = new ArrayList<>();
            ProcessHandle.of(shell).ifPresent(h -> {
                handles.add(h);
                h.descendants().forEach(handles::add);
            });
            List<Long> command = handles.stream().map(ProcessHandle::pid).collect(java.util.stream.Collectors.toList());
            if (command.stream().anyMatch(pid -> program.equals(comm(pid)))) {
                commands.addAll(handles);
                return command;
            }
            if (!server.isAlive() || System.nanoTime() > deadline) fail(program + " never ran: " + serverErr());
            Thread.sleep(20);
        }
    }

    /** Asserts that nbdcopy has not finished yet: the signal lands in the middle of the copy. */
    private static void assertCopying(List<Long> command) {
        assertTrue(command.stream().anyMatch(pid -> "nbdcopy".equals(comm(pid)) && alive(pid)), "nbdcopy is still copying");
    }

    /** Waits for the command's nbdcopy, lets it copy for a second, checks it still is, and sends the server SIGTERM. */
    private List<Long> sigtermWhileCopying(Process server, long group) throws Exception {
        List<Long> command = awaitUnder(group, "nbdcopy", server);
        Thread.sleep(1000);
        assertCopying(command);
        signal(server, SIGTERM);
        return command;
    }

    /** Asserts that none of the command's processes is alive, nor any other of its process group. */
    private static void assertNoneLeft(List<Long> command, long group) throws Exception {
        List<Long> left = new ArrayList<>(liveInGroup(group));
        for (long pid : command) {
            if (alive(pid) && !left.contains(pid)) left.add(pid);
        }
        assertEquals(List.of(), left, "processes of the command left: " + describe(left));
    }

    /** {@return whether this process ignores the signal (SigIgn in /proc/self/status), which its children inherit} */
    private static boolean ignoredAtStart(int signal) throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (line.startsWith("SigIgn:")) {
                return (Long.parseUnsignedLong(line.substring("SigIgn:".length()).trim(), 16) & (1L << (signal - 1))) != 0;
            }
        }
        return false;
    }

    private static void signal(Process server, int signal) throws Exception {
        ExternalTools.run(10, "kill", "-" + signal, String.valueOf(server.pid())).assertOk("kill");
    }

    private int exitStatus(Process server, int seconds) throws Exception {
        if (!server.waitFor(seconds, TimeUnit.SECONDS)) fail("the server did not exit within " + seconds + " s: " + serverErr());
        return server.exitValue();
    }

    /** {@return /proc/PID/stat's fields after the command name: state, ppid, pgrp, ...; or null when it is gone} */
    private static String[] stat(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc", String.valueOf(pid), "stat"));
            return stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        } catch (IOException e) {
            return null;
        }
    }

    private static String comm(long pid) {
        try {
            return Files.readString(Path.of("/proc", String.valueOf(pid), "comm")).strip();
        } catch (IOException e) {
            return "";
        }
    }

    /** A process that exists and is not a zombie (one whose parent has not reaped it yet is dead all the same). */
    private static boolean alive(long pid) {
        String[] fields = stat(pid);
        return fields != null && !fields[0].equals("Z");
    }

    /** The processes of a process group that are alive, from /proc. */
    private static List<Long> liveInGroup(long group) throws IOException {
        List<Long> live = new ArrayList<>();
        try (DirectoryStream<Path> processes = Files.newDirectoryStream(Path.of("/proc"), "[0-9]*")) {
            for (Path p : processes) {
                long pid = Long.parseLong(p.getFileName().toString());
                String[] fields = stat(pid);
                if (fields != null && !fields[0].equals("Z") && Long.parseLong(fields[2]) == group) live.add(pid);
            }
        }
        return live;
    }

    /** The command's processes, each with its command line: for a failure message. */
    private static String describe(List<Long> pids) {
        StringBuilder text = new StringBuilder();
        for (long pid : pids) {
            try {
                text.append(pid).append(' ').append(Files.readString(Path.of("/proc", String.valueOf(pid), "cmdline"))
                        .replace('\0', ' ')).append('\n');
            } catch (IOException e) {
                text.append(pid).append(" (gone)\n");
            }
        }
        return text.toString();
    }

    /**
     * The README's backup, SIGTERM in the middle of the copy, with a command that ignores it: the server serves on
     * until nbdcopy has copied everything and exits with its status, 0. Before, the server closed its socket and
     * exited 0 at once, nbdcopy failed with "Transport endpoint is not connected", and the backup was cut short.
     */
    @Test
    void theServerServesUntilTheCommandFinishesAndExitsWithItsStatus() throws Exception {
        ExternalTools.require("nbdcopy");
        Path image = randomImage();
        Path backup = dir.resolve("backup.img");
        Process server = start("--filter=rate:rate=8M,burstiness=0.5", image.toString(), "--run",
                "trap '' TERM; echo $$ > pid; nbdcopy \"$uri\" backup.img; status=$?; echo $status > status; exit $status");
        long group = awaitPid(dir.resolve("pid"), server);
        List<Long> command = sigtermWhileCopying(server, group);
        int status = exitStatus(server, 60);
        assertEquals(0, status, serverErr());
        assertEquals(status, Integer.parseInt(Files.readString(dir.resolve("status")).trim()), "nbdcopy's status");
        assertEquals(-1, Files.mismatch(image, backup), "the backup is whole");
        assertTrue(serverErr().contains("SIGTERM: passed on to the command (process group " + group + ")"), serverErr());
        assertNoneLeft(command, group);
    }

    /**
     * A real nbdcopy that SIGTERM ends in the middle of the copy: the server exits 143 (128 + 15), as the command did,
     * never 0, and leaves no process of it behind.
     */
    @Test
    void aCopyEndedBySigtermMakesTheServerExit143() throws Exception {
        ExternalTools.require("nbdcopy");
        Path image = randomImage();
        Process server = start("--filter=rate:rate=8M,burstiness=0.5", image.toString(), "--run",
                "echo $$ > pid; nbdcopy \"$uri\" backup.img");
        long group = awaitPid(dir.resolve("pid"), server);
        List<Long> command = sigtermWhileCopying(server, group);
        assertEquals(128 + SIGTERM, exitStatus(server, 30), serverErr());
        assertNoneLeft(command, group);
    }

    /**
     * A command that runs one program after another: the signal reaches the one running (the sleep), not only the
     * shell, so neither is left running with the server gone; the exit status is 128 + 15 within seconds, not 30.
     * The command's standard output is still the server's.
     */
    @Test
    void everyProcessOfTheCommandGetsTheSignal() throws Exception {
        Process server = start("--run", "echo $$ > pid; echo started; sleep 30; nbdinfo \"$uri\"");
        long group = awaitPid(dir.resolve("pid"), server);
        List<Long> command = awaitUnder(group, "sleep", server);
        long signalled = System.nanoTime();
        signal(server, SIGTERM);
        assertEquals(128 + SIGTERM, exitStatus(server, 20), serverErr());
        assertTrue(System.nanoTime() - signalled < TimeUnit.SECONDS.toNanos(15), "the sleep was ended, not waited for");
        assertNoneLeft(command, group);
        assertEquals("started\n", Files.readString(dir.resolve("stdout.txt")));
        assertFalse(serverErr().contains("WARNING"), "no JVM warning (sun.misc.Signal gives none): " + serverErr());
    }

    /**
     * A command that ignores SIGTERM keeps the server after the first; the second signal (SIGHUP here, or SIGTERM
     * again where this JVM was started with SIGHUP ignored, as under nohup: the server inherits that, and a signal
     * ignored at a JVM's start is never delivered to it) kills it and the server exits 128 + that signal at once.
     */
    @Test
    void aSecondSignalKillsTheCommandAndEndsTheServer() throws Exception {
        int second = ignoredAtStart(SIGHUP) ? SIGTERM : SIGHUP;
        Process server = start("--run", "trap '' TERM HUP; echo $$ > pid; sleep 30");
        long group = awaitPid(dir.resolve("pid"), server);
        List<Long> command = awaitUnder(group, "sleep", server);
        signal(server, SIGTERM);
        Thread.sleep(1500);
        assertTrue(server.isAlive(), "the server waits for the command: " + serverErr());
        assertTrue(command.stream().allMatch(ServeRunSignalsTest::alive), "the command ignored SIGTERM");
        long signalled = System.nanoTime();
        signal(server, second);
        assertEquals(128 + second, exitStatus(server, 20), serverErr());
        assertTrue(System.nanoTime() - signalled < TimeUnit.SECONDS.toNanos(10), "the second signal ended both at once");
        assertNoneLeft(command, group);
        assertTrue(serverErr().contains("killing the command (SIGKILL to process group " + group + ")"), serverErr());
    }

    /**
     * Without setsid on the PATH the command runs as sh -c in the server's process group: the signal then goes to
     * the shell and the processes it started, so the sleep is not left behind either.
     */
    @Test
    void withoutSetsidTheShellAndItsChildrenGetTheSignal() throws Exception {
        Path bin = Files.createDirectories(dir.resolve("bin"));
        for (String program : List.of("sh", "sleep")) {
            String found = ExternalTools.run(10, "sh", "-c", "command -v " + program).assertOk(program).stdout().strip();
            Files.copy(Path.of(found), bin.resolve(program), java.nio.file.StandardCopyOption.COPY_ATTRIBUTES);
        }
        ProcessBuilder builder = new ProcessBuilder(serveCommand("--run", "echo $$ > pid; sleep 30; true"));
        builder.environment().put("PATH", bin.toString());
        Process server = start(builder);
        Path pidFile = dir.resolve("pid");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!Files.exists(pidFile) || !Files.readString(pidFile).endsWith("\n")) {
            if (!server.isAlive() || System.nanoTime() > deadline) fail("the command never ran: " + serverErr());
            Thread.sleep(20);
        }
        long shell = Long.parseLong(Files.readString(pidFile).trim());
        List<Long> sleeps = new ArrayList<>();
        while (sleeps.isEmpty()) {
            ProcessHandle.of(shell).ifPresent(h -> h.children().forEach(c -> {
                commands.add(h);
                commands.add(c);
                sleeps.add(c.pid());
            }));
            if (System.nanoTime() > deadline) fail("no sleep under the shell: " + serverErr());
            Thread.sleep(20);
        }
        assertTrue(Long.parseLong(stat(shell)[2]) != shell, "no process group of its own without setsid");
        signal(server, SIGTERM);
        assertEquals(128 + SIGTERM, exitStatus(server, 20), serverErr());
        long gone = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (alive(sleeps.get(0)) && System.nanoTime() < gone) Thread.sleep(20);
        assertTrue(!alive(shell) && !alive(sleeps.get(0)), "the shell and its sleep are gone");
    }

    /**
     * A signal that comes before the command ran (here while the server still connects to the upstream it
     * proxies): the server stops and exits 128 + the signal, not 0, since the command's work was not done.
     */
    @Test
    void aSignalBeforeTheCommandRunsIsNotASuccess() throws Exception {
        try (ServerSocket silent = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            Process server = start("nbd://127.0.0.1:" + silent.getLocalPort() + "/", "--run", "touch ran");
            try (Socket upstream = silent.accept()) {
                // connected, and waiting for a greeting that never comes
                Thread.sleep(300);
                signal(server, SIGTERM);
                assertEquals(128 + SIGTERM, exitStatus(server, 30), serverErr());
            }
        }
        assertTrue(!Files.exists(dir.resolve("ran")), "the command never ran");
    }

    /** The command still reads the server's standard input and writes to its standard output. */
    @Test
    void theCommandHasTheServersStandardStreams() throws Exception {
        Process server = start(new ProcessBuilder(serveCommand("--run", "read line; echo \"got $line\""))
                .redirectInput(ProcessBuilder.Redirect.PIPE));
        server.getOutputStream().write("abc\n".getBytes(StandardCharsets.UTF_8));
        server.getOutputStream().close();
        assertEquals(0, exitStatus(server, 30), serverErr());
        assertEquals("got abc\n", Files.readString(dir.resolve("stdout.txt")));
    }
}

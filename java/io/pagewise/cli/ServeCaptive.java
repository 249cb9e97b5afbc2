package io.pagewise.cli;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import sun.misc.Signal;
import sun.misc.SignalHandler;

/**
 * --run's command, and the signals that would stop the server while it runs. The command runs as {@code setsid sh -c
 * CMD}: a session and process group of its own, which every process it starts joins. SIGINT, SIGTERM and SIGHUP to
 * the server are passed on to that group, and the server goes on serving until the group's last process is gone, so
 * that a command finishing its work (or its cleanup) still has its server. A second signal kills the group (SIGKILL)
 * and the server exits 128 + that signal. Without setsid on the PATH the command runs as {@code sh -c CMD} and
 * signals go to the shell and the processes it has started by then.
 *
 * <p>The JVM's own handlers for these signals would run the shutdown hooks and stop the server under the command;
 * sun.misc.Signal (module jdk.unsupported) is the only way Java has to take the signals instead. Its handlers are
 * JVM-wide, so one dispatcher serves every command running in this JVM and the JVM's handlers come back
 * when the last one ends.
 */
final class ServeCaptive {
    private static final List<String> STOPPING = List.of("INT", "TERM", "HUP");
    /** Commands running now; the dispatcher is installed while there is one. */
    private static final Set<ServeCaptive> RUNNING = new LinkedHashSet<>();
    /** The handlers the dispatcher replaced, to restore; empty while none is installed. */
    private static final Map<Signal, SignalHandler> REPLACED = new java.util.HashMap<>();

    private final System.Logger logger;
    /** The command's shell (setsid's process, which execs it); null until started, and when a signal came first. */
    private Process process;
    /** Whether the command leads a process group of its own (setsid was found), whose id is its pid. */
    private final boolean ownGroup;
    /** The first signal received and passed on, or 0. */
    private int passedOn;
    /** The second signal, after which the group was killed, or 0. */
    private int killedBy;

    private ServeCaptive(System.Logger logger, boolean ownGroup) {
        this.logger = logger;
        this.ownGroup = ownGroup;
    }

    /** Starts {@code sh -c command} as the given builder says (environment, I/O), in a session of its own. */
    static ServeCaptive start(ProcessBuilder builder, String command, System.Logger logger) throws IOException {
        boolean ownGroup = onPath("setsid");
        if (!ownGroup) {
            logger.log(System.Logger.Level.DEBUG, "setsid (util-linux) not found: signals reach the command's shell"
                    + " and the processes it has started by then, not ones started later");
        }
        builder.command(ownGroup ? List.of("setsid", "sh", "-c", command) : List.of("sh", "-c", command));
        ServeCaptive captive = new ServeCaptive(logger, ownGroup);
        captive.watch(); // first, so that no signal finds the command started and the JVM's handlers still in place
        try {
            // Under the lock a signal waits for the start, to find the process; one that came before, no command.
            synchronized (captive) {
                if (captive.passedOn == 0) captive.process = builder.start();
            }
        } catch (IOException | RuntimeException e) {
            captive.unwatch();
            throw e;
        }
        return captive;
    }

    /** {@return whether the JVM's PATH, where ProcessBuilder looks for programs, has an executable program} */
    private static boolean onPath(String program) {
        String path = System.getenv("PATH");
        if (path == null) return false;
        for (String dir : path.split(":")) {
            if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, program))) return true;
        }
        return false;
    }

    /**
     * Waits for the command; after a signal, for every process of its group too. {@return its exit status: 128 + the
     * signal when a signal ended it (the JVM's reading of a wait status), or 128 + the second signal the server got,
     * or 128 + the signal that came before the command could start}
     */
    int waitFor() throws InterruptedException {
        try {
            Process process;
            synchronized (this) {
                if (this.process == null) return 128 + passedOn;
                process = this.process;
            }
            int status = process.waitFor();
            if (ownGroup && passedOn() != 0) awaitGroupGone(process.pid());
            synchronized (this) {
                return killedBy != 0 ? 128 + killedBy : status;
            }
        } finally {
            unwatch();
        }
    }

    private synchronized int passedOn() {
        return passedOn;
    }

    /** The command's shell has exited after a signal: its group may still be finishing; a second signal ends that. */
    private void awaitGroupGone(long group) throws InterruptedException {
        long killedAt = 0;
        while (!groupMembers(group).isEmpty()) {
            synchronized (this) {
                if (killedBy != 0 && killedAt == 0) killedAt = System.nanoTime();
                // SIGKILL ends even a stopped process, but one in uninterruptible sleep only once it wakes: not waited for long.
                if (killedAt != 0 && System.nanoTime() - killedAt > TimeUnit.SECONDS.toNanos(5)) return;
                wait(50);
            }
        }
    }

    /** {@return the processes of the process group, from /proc; zombies left out} */
    private static List<Long> groupMembers(long group) {
        List<Long> members = new ArrayList<>();
        try (DirectoryStream<Path> processes = Files.newDirectoryStream(Path.of("/proc"), "[0-9]*")) {
            for (Path p : processes) {
                String stat;
                try {
                    stat = Files.readString(p.resolve("stat"));
                } catch (IOException e) {
                    continue; // gone meanwhile
                }
                // pid (comm) state ppid pgrp ...: comm may hold spaces and parentheses, so count from the last ')'.
                String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                if (!fields[0].equals("Z") && Long.parseLong(fields[2]) == group) {
                    members.add(Long.parseLong(p.getFileName().toString()));
                }
            }
        } catch (IOException e) {
            // no /proc: the shell's exit is all there is to wait for
        }
        return members;
    }

    private void onSignal(Signal signal) {
        boolean first;
        Process started;
        synchronized (this) {
            if (killedBy != 0) return;
            first = passedOn == 0;
            if (first) {
                passedOn = signal.getNumber();
            } else {
                killedBy = signal.getNumber();
            }
            started = process;
            notifyAll();
        }
        if (started == null) {
            logger.log(System.Logger.Level.INFO, "SIG" + signal.getName() + " before the command started: not running it");
            return;
        }
        String target = (ownGroup ? "process group " : "process ") + started.pid();
        if (first) {
            logger.log(System.Logger.Level.INFO, "SIG" + signal.getName() + ": passed on to the command (" + target
                    + "); serving until it exits; a second signal kills it");
            send(started, signal.getName());
        } else {
            logger.log(System.Logger.Level.WARNING, "SIG" + signal.getName() + ", a second signal: killing the command"
                    + " (SIGKILL to " + target + ")");
            send(started, "KILL");
        }
    }

    /** Sends the signal to the command's process group; to its shell and the shell's descendants without one. */
    private void send(Process process, String signal) {
        List<String> kill;
        if (ownGroup) {
            // Until setsid() has run in the child there is no group yet: the process itself is all there is then.
            kill = List.of("sh", "-c", "kill -s \"$0\" -- \"-$1\" 2>/dev/null || kill -s \"$0\" \"$1\"", signal,
                    String.valueOf(process.pid()));
        } else {
            kill = new ArrayList<>(List.of("sh", "-c", "kill -s \"$0\" \"$@\" 2>/dev/null", signal,
                    String.valueOf(process.pid())));
            kill.addAll(process.descendants().map(p -> String.valueOf(p.pid())).collect(Collectors.toList()));
        }
        try {
            Process sent = new ProcessBuilder(kill).redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectError(ProcessBuilder.Redirect.DISCARD).start();
            if (!sent.waitFor(10, TimeUnit.SECONDS)) sent.destroyForcibly();
        } catch (IOException e) {
            logger.log(System.Logger.Level.ERROR, "cannot pass SIG" + signal + " on to the command: " + Main.message(e));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Takes SIGINT, SIGTERM and SIGHUP from the JVM for this command (and any other running). */
    private void watch() {
        synchronized (RUNNING) {
            RUNNING.add(this);
            if (RUNNING.size() > 1) return;
            for (String name : STOPPING) {
                Signal signal = new Signal(name);
                try {
                    REPLACED.put(signal, Signal.handle(signal, ServeCaptive::dispatch));
                } catch (IllegalArgumentException e) {
                    // -Xrs leaves the signals to the JVM's defaults
                    logger.log(System.Logger.Level.DEBUG, "SIG" + name + " is not passed on to the command: " + e.getMessage());
                }
            }
        }
    }

    private void unwatch() {
        synchronized (RUNNING) {
            if (!RUNNING.remove(this) || !RUNNING.isEmpty()) return;
            REPLACED.forEach(Signal::handle);
            REPLACED.clear();
        }
    }

    private static void dispatch(Signal signal) {
        List<ServeCaptive> commands;
        synchronized (RUNNING) {
            commands = new ArrayList<>(RUNNING);
        }
        for (ServeCaptive c : commands) c.onSignal(signal);
    }
}

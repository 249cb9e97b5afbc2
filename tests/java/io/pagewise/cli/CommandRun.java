package io.pagewise.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The tests' one harness for the command line: the exit status and captured output of one in-process run through
 * {@link Main#run}, or ({@link #inOwnJvm}) the command that runs it in a JVM of its own.
 *
 * @param commandLine the arguments after {@code pagewise}, joined by spaces, for messages
 * @param status      the exit status
 * @param out         standard output (with copy's {@code DST -} data when run {@link #withInput})
 * @param err         the messages
 */
public record CommandRun(String commandLine, int status, String out, String err) {
    /** Runs {@code pagewise ARGS...} with standard input as it is. */
    public static CommandRun of(String... args) {
        return run(System.in, args);
    }

    /** Runs {@code pagewise COMMAND ARGS...}. */
    public static CommandRun command(String command, String... args) {
        String[] all = new String[args.length + 1];
        all[0] = command;
        System.arraycopy(args, 0, all, 1, args.length);
        return of(all);
    }

    /** Runs {@code pagewise ARGS...} reading input as standard input (copy's {@code SRC -}). */
    public static CommandRun withInput(byte[] input, String... args) {
        return run(new ByteArrayInputStream(input), args);
    }

    private static CommandRun run(InputStream in, String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        PrintStream text = new PrintStream(out, true, StandardCharsets.UTF_8);
        int status = Main.run(args, in, text, text, new PrintStream(err, true, StandardCharsets.UTF_8));
        return new CommandRun(String.join(" ", args), status, out.toString(StandardCharsets.UTF_8),
                err.toString(StandardCharsets.UTF_8));
    }

    /** Fails, naming the command line and its messages, unless the exit status is expected; returns this run. */
    public CommandRun assertStatus(int expected) {
        assertEquals(expected, status, "pagewise " + commandLine + "\n" + err);
        return this;
    }

    /** Fails unless the command succeeded; returns this run. */
    public CommandRun assertOk() {
        return assertStatus(0);
    }

    /** Fails, showing the messages, unless they contain part; returns this run. */
    public CommandRun assertErrContains(String part) {
        assertTrue(err.contains(part), "pagewise " + commandLine + ": no \"" + part + "\" in\n" + err);
        return this;
    }

    /**
     * The command that runs {@code pagewise COMMAND ARGS...} in a JVM of its own, from this build's classes. Native access is
     * enabled as the jar's manifest enables it, so JDK 24+ prints no warning (JDK 17 takes the flag too).
     */
    public static List<String> inOwnJvm(String command, String... args) {
        List<String> line = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED", "-cp",
                Path.of(System.getProperty("user.dir"), "target", "classes").toString(), "io.pagewise.cli.Main", command));
        line.addAll(List.of(args));
        return line;
    }
}

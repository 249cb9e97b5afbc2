package io.pagewise.cli;

import io.pagewise.Native;
import io.pagewise.PageCache;
import io.pagewise.Residency;
import io.pagewise.internal.FileErrors;
import io.pagewise.internal.OperationCounter;
import java.io.FileDescriptor;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.file.FileSystemException;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Properties;

/** {@code pagewise} command line: a thin layer over the public API. */
public final class Main {
    /** What the options before a command ask for. */
    static final class Options {
        boolean version;
    }

    /** Each command, how it is called and what it does. */
    private static final List<String[]> COMMANDS = List.of(
            new String[] {"cachestats FILE...", "show how much of each file is in the page cache (like vmtouch)"},
            new String[] {"evict FILE...", "write back and drop each file from the page cache"},
            new String[] {"serve [OPTIONS] [FILE...]", "serve FILEs over NBD (pagewise serve --help)"},
            new String[] {"copy [OPTIONS] SRC DST", "copy files and NBD exports, sparse and cache-friendly"
                    + " (pagewise copy --help)"},
            new String[] {"checksum [OPTIONS] IMAGE...", "blkhash checksum of files and NBD exports, as blksum"
                    + " (pagewise checksum --help)"},
            new String[] {"help", "show this help"});

    /** pagewise's own options, before the command: the usage and (checked by a test) README.md come from it. */
    static final OptionTable<Options> TABLE = new OptionTable<>("usage: pagewise COMMAND [ARGS]",
            "commands:\n" + OptionTable.columns(COMMANDS) + "\n\noptions:", List.of(
            CliOption.flag("-V, --version", "show the version and whether the native library is loaded",
                    (o, name, value) -> o.version = true)),
            (o, operand, afterEnd) -> {
                throw new UsageException("unknown command '" + operand + "'" + commandSuggestion(operand));
            }, "");

    /** {@return "; did you mean serve?" for a word a typo or two from a command, or a prefix of one}, or "" */
    static String commandSuggestion(String word) {
        List<String> close = new ArrayList<>();
        for (String[] command : COMMANDS) {
            String name = command[0].split(" ")[0];
            boolean prefix = word.length() >= 2 && name.startsWith(word);
            if (prefix || OptionTable.editDistance(word, name) <= Math.min(2, Math.max(1, name.length() / 4))) {
                close.add(name);
            }
        }
        return close.isEmpty() ? "" : "; did you mean " + String.join(" or ", close) + "?";
    }

    /** The options of cachestats and evict: none but help; FILE... are their operands. */
    static OptionTable<List<String>> fileCommandTable(String command) {
        return new OptionTable<>("usage: pagewise " + command + " [--] FILE...", "", List.of(),
                (files, operand, afterEnd) -> files.add(operand), " (use -- before a FILE that starts with -)");
    }

    static final String USAGE = TABLE.usage();

    private Main() {}

    /**
     * Runs the command line and exits with its status.
     *
     * @param args the command line
     */
    public static void main(String[] args) {
        // copy's - reads file descriptor 0 and writes 1 through their FileChannels: no copies, no buffer that hides a
        // failed write.
        System.exit(run(args, new FileInputStream(FileDescriptor.in), new FileOutputStream(FileDescriptor.out),
                System.out, System.err));
    }

    /**
     * Runs a command line with standard input and output for copy's {@code -} as they are; returns the exit status.
     *
     * @param args the command line
     * @param out  text output
     * @param err  messages
     * @return the exit status
     */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        return run(args, System.in, out, out, err);
    }

    /**
     * Runs a command line; returns the exit status.
     *
     * @param args the command line
     * @param in   what {@code copy - DST} reads
     * @param data where {@code copy SRC -} writes
     * @param out  text output
     * @param err  messages
     * @return the exit status
     */
    public static int run(String[] args, InputStream in, OutputStream data, PrintStream out, PrintStream err) {
        if (args.length == 0) {
            err.println(USAGE);
            return 2;
        }
        List<String> rest = Arrays.asList(args).subList(1, args.length);
        try {
            return command(args[0], rest, in, data, out, err);
        } catch (InvalidPathException e) { // a file name given on the command line
            err.println("pagewise " + args[0] + ": " + unencodable(e));
            return 2;
        }
    }

    private static int command(String command, List<String> rest, InputStream in, OutputStream data, PrintStream out,
                               PrintStream err) {
        switch (command) {
            case "help":
                out.println(USAGE);
                return 0;
            case "cachestats":
                return forEachFile("cachestats", rest, out, err, Main::cachestats);
            case "evict":
                return forEachFile("evict", rest, out, err, (path, o) -> {
                    PageCache.evict(path);
                    o.println("evicted " + path);
                });
            case "serve":
                return ServeCommand.run(rest, out, err);
            case "copy":
                return CopyCommand.run(rest, in, data, out, err);
            case "checksum":
                return ChecksumCommand.run(rest, out, err);
            default:
                return options(command, out, err);
        }
    }

    /** Not a command: -h, -V and their long names (what follows them is ignored), or a mistake. */
    private static int options(String arg, PrintStream out, PrintStream err) {
        Options options = new Options();
        try {
            if (!TABLE.parse(List.of(arg), options)) {
                out.println(USAGE);
                return 0;
            }
        } catch (UsageException e) {
            err.println("pagewise: " + e.getMessage() + "\n" + USAGE);
            return 2;
        }
        if (!options.version) {
            err.println("pagewise: no COMMAND given\n" + USAGE);
            return 2;
        }
        out.println("pagewise " + version() + " (native library: "
                + (Native.isAvailable() ? "loaded, " + Native.platform() + ", " + Native.binding() : Native.loadError().getMessage())
                + "; asynchronous I/O: " + Native.asyncPath() + ")");
        return 0;
    }

    private interface FileAction {
        void apply(Path path, PrintStream out) throws IOException;
    }

    private static int forEachFile(String command, List<String> args, PrintStream out, PrintStream err, FileAction action) {
        OptionTable<List<String>> table = fileCommandTable(command);
        List<String> files = new ArrayList<>();
        try {
            if (!table.parse(args, files)) {
                out.println(table.usage());
                return 0;
            }
        } catch (UsageException e) {
            err.println("pagewise " + command + ": " + e.getMessage() + "\n" + table.synopsis());
            return 2;
        }
        if (files.isEmpty()) {
            err.println("pagewise " + command + ": no FILE given\n" + table.synopsis());
            return 2;
        }
        if (!Native.isAvailable()) {
            err.println("pagewise " + command + ": needs the native library, which is "
                    + Native.loadError().getMessage());
            return 1;
        }
        int status = 0;
        for (String name : files) {
            try {
                action.apply(Path.of(name), out);
            } catch (IOException | RuntimeException e) {
                err.println("pagewise " + command + ": " + message(e));
                status = 1;
            }
        }
        return status;
    }

    private static void cachestats(Path path, PrintStream out) throws IOException {
        Residency r = PageCache.residency(path);
        out.printf(Locale.ROOT, "%s: %d/%d pages resident (%.1f%%), %s of %s%n", path, r.residentPages(),
                r.totalPages(), r.percent(), bytes(r.residentBytes()), bytes(r.totalPages() * r.pageSize()));
    }

    /**
     * A failure as one line for the user: the JDK's file exceptions carry only the path when the system gave no
     * reason (NoSuchFileException's message is the path alone), so the reason their type stands for is added.
     */
    static String message(Throwable e) {
        if (e instanceof FileSystemException && ((FileSystemException) e).getReason() == null) {
            FileSystemException f = (FileSystemException) e;
            String reason = FileErrors.reasonOfType(f);
            if (reason != null && f.getFile() != null) {
                return f.getFile() + (f.getOtherFile() != null ? " -> " + f.getOtherFile() : "") + ": " + reason;
            }
        }
        if (e instanceof InvalidPathException) return unencodable((InvalidPathException) e);
        String text = e.getMessage();
        return text == null ? e.toString() : text;
    }

    /** The JVM encodes file names in the locale's character set: under C or POSIX, ASCII alone. */
    private static String unencodable(InvalidPathException e) {
        String advice = utf8LocaleAdvice();
        return "the file name '" + e.getInput() + "' cannot be encoded in " + localeCharset()
                + (advice == null ? ": " + e.getReason() : "; " + advice);
    }

    /** {@return "this locale's character set (NAME)"}: the one the JVM encodes and decodes file names and arguments in */
    static String localeCharset() {
        return "this locale's character set (" + System.getProperty("sun.jnu.encoding", "unknown") + ")";
    }

    /** {@return how to run under a UTF-8 locale}, or null when the JVM's locale is UTF-8 already */
    static String utf8LocaleAdvice() {
        return System.getProperty("sun.jnu.encoding", "").equalsIgnoreCase("UTF-8") ? null
                : "run under a UTF-8 locale (LC_ALL=C.UTF-8, as bin/pagewise does)";
    }

    static String bytes(long n) {
        return OperationCounter.amount(n, 1);
    }

    static String version() {
        try (InputStream in = Main.class.getResourceAsStream("/io/pagewise/version.properties")) {
            Properties p = new Properties();
            if (in != null) p.load(in);
            return p.getProperty("version", "unknown");
        } catch (IOException e) {
            return "unknown";
        }
    }
}

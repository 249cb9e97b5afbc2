package io.pagewise.cli;

import io.pagewise.Native;
import io.pagewise.PageCache;
import io.pagewise.Residency;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Properties;

/** {@code pagewise} command line: a thin layer over the public API. */
public final class Main {
    private static final String USAGE = String.join("\n",
            "usage: pagewise COMMAND [ARGS]",
            "",
            "commands:",
            "  cachestats FILE...   show how much of each file is in the page cache (like vmtouch)",
            "  evict FILE...        write back and drop each file from the page cache",
            "  serve [OPTIONS] [FILE]  serve FILE over NBD (pagewise serve --help)",
            "  copy [OPTIONS] SRC DST  copy files and NBD exports, sparse and cache-friendly (pagewise copy --help)",
            "",
            "options:",
            "  -h, --help           show this help",
            "  -V, --version        show the version and whether the native library is loaded");

    private Main() {}

    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    /** Runs a command line; returns the exit status. */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        if (args.length == 0) {
            err.println(USAGE);
            return 2;
        }
        List<String> rest = Arrays.asList(args).subList(1, args.length);
        switch (args[0]) {
            case "-h": case "--help": case "help":
                out.println(USAGE);
                return 0;
            case "-V": case "--version":
                out.println("pagewise " + version() + " (native library: "
                        + (Native.isAvailable() ? "loaded, " + Native.platform() + ", " + Native.binding() : Native.loadError().getMessage())
                        + ")");
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
                return CopyCommand.run(rest, out, err);
            default:
                err.println("pagewise: unknown command '" + args[0] + "'\n" + USAGE);
                return 2;
        }
    }

    private interface FileAction {
        void apply(Path path, PrintStream out) throws IOException;
    }

    private static int forEachFile(String command, List<String> args, PrintStream out, PrintStream err, FileAction action) {
        String usage = "usage: pagewise " + command + " [--] FILE...";
        List<String> files = new ArrayList<>();
        boolean positionalOnly = false;
        for (String arg : args) {
            if (positionalOnly || !arg.startsWith("-") || arg.equals("-")) {
                files.add(arg);
            } else if (arg.equals("--")) {
                positionalOnly = true;
            } else if (arg.equals("-h") || arg.equals("--help")) {
                out.println(usage);
                return 0;
            } else {
                err.println("pagewise " + command + ": unknown option '" + arg + "' (use -- before a FILE that starts with -)\n"
                        + usage);
                return 2;
            }
        }
        if (files.isEmpty()) {
            err.println("pagewise " + command + ": no FILE given\n" + usage);
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
                err.println("pagewise " + command + ": " + e.getMessage());
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

    static String bytes(long n) {
        String[] units = {"B", "KiB", "MiB", "GiB", "TiB"};
        double value = n;
        int unit = 0;
        while (value >= 1024 && unit < units.length - 1) {
            value /= 1024;
            unit++;
        }
        return unit == 0 ? n + " B" : String.format(Locale.ROOT, "%.1f %s", value, units[unit]);
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

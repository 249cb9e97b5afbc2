package io.pagewise.testing;

import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A LazyFS mount for power-loss tests: a FUSE file system that keeps written data in its own cache until it is
 * synced, and throws away everything unsynced on {@link #powerCut()}. What survived is read from the backing
 * directory ({@link #backing(String)}), never through the mount, whose kernel page cache may still hold the lost
 * pages. One mount per test class; {@link #close()} unmounts, stops LazyFS and deletes everything it made, and a
 * shutdown hook does the same if the JVM exits first.
 *
 * <p>The binary is {@code $PAGEWISE_LAZYFS}, else the default output of {@code ../shared/tools/lazyfs/build.sh}
 * ({@code /tmp/lazyfs-build/lazyfs/build/lazyfs}), else {@code lazyfs} on PATH. Without it or without
 * {@code /dev/fuse} the tests skip, or fail under CI=true, through the {@link Unavailable} the caller passes: the
 * class uses no test framework, so that the JUnit 5 tests here and the JUnit 4 tests of the Lucene module share it.
 */
public final class LazyFsMount implements AutoCloseable {
    /** Where {@code build.sh} puts the binary when given no output directory. */
    private static final Path DEFAULT_BUILD = Path.of("/tmp/lazyfs-build/lazyfs/build/lazyfs");
    private static final String CLEARED = "cache is cleared.";
    private static final String READY = "waiting for fault commands";
    private static final long WAIT_SECONDS = 20;

    private final Path root;
    private final Path mountpoint;
    private final Path backing;
    private final Path fifo;
    private final Path log;
    private final Process process;
    private final Thread cleanupHook;
    private boolean closed;

    /** What a test framework does when LazyFS cannot run here: skips the test, or fails it under CI=true. */
    @FunctionalInterface
    public interface Unavailable {
        /**
         * Skips or fails the calling test; never returns normally.
         *
         * @param message what is missing
         * @param why     why CI must have it
         */
        void unavailable(String message, String why);
    }

    private LazyFsMount(Path root, Path mountpoint, Path backing, Path fifo, Path log, Process process) {
        this.root = root;
        this.mountpoint = mountpoint;
        this.backing = backing;
        this.fifo = fifo;
        this.log = log;
        this.process = process;
        this.cleanupHook = new Thread(this::cleanUp, "lazyfs-unmount " + mountpoint);
        Runtime.getRuntime().addShutdownHook(cleanupHook);
    }

    /**
     * Mounts LazyFS in a new directory under parent: {@code mnt/} over {@code backing/}, with its fault FIFO,
     * configuration and log beside them. Skips (or fails on CI) when LazyFS or FUSE is not here.
     *
     * @param parent      a directory on a local file system (the backing directory's file system does the real I/O)
     * @param unavailable how the calling test framework skips, or fails under CI=true
     *                    ({@code ExternalTools::unavailable} in JUnit 5 tests)
     * @return the mounted file system
     * @throws IOException when a file cannot be made
     */
    public static LazyFsMount mount(Path parent, Unavailable unavailable) throws IOException {
        Path binary = binary(unavailable);
        if (!Files.isReadable(Path.of("/dev/fuse")) || !Files.isWritable(Path.of("/dev/fuse"))) {
            skip(unavailable, "/dev/fuse is not usable here", "the power-loss tests mount LazyFS");
        }
        for (String program : new String[] {"mkfifo", "fusermount3"}) {
            if (onPath(program) == null) {
                skip(unavailable, "external program missing: " + program + " (not on PATH)",
                        "every program must be installed");
            }
        }
        Path root = Files.createTempDirectory(parent, "lazyfs-");
        Path mountpoint = Files.createDirectory(root.resolve("mnt"));
        Path backing = Files.createDirectory(root.resolve("backing"));
        Path fifo = root.resolve("faults.fifo");
        Path log = root.resolve("lazyfs.log");
        Path config = root.resolve("lazyfs.toml");
        String made = run("mkfifo", fifo.toString());
        if (made != null) throw new IOException("mkfifo " + fifo + ": " + made);
        Files.writeString(config, String.join("\n",
                "[faults]",
                "fifo_path=\"" + fifo + "\"",
                "[cache]",
                "apply_eviction=false",
                "[cache.simple]",
                "custom_size=\"256mb\"",
                "blocks_per_page=1",
                "[filesystem]",
                "log_all_operations=false",
                "logfile=\"\"",
                ""));
        // -f keeps LazyFS in the foreground: it stays this JVM's child, and its log goes to the file.
        Process process = new ProcessBuilder(binary.toString(), mountpoint.toString(), "--config-path", config.toString(),
                "-f", "-o", "modules=subdir", "-o", "subdir=" + backing)
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        LazyFsMount mount = new LazyFsMount(root, mountpoint, backing, fifo, log, process);
        try {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
            while (!(mount.isMounted() && mount.log().contains(READY))) {
                if (!process.isAlive()) {
                    String output = mount.log();
                    mount.close();
                    skip(unavailable, "LazyFS (" + binary + ") could not mount " + mountpoint + ": exit "
                            + process.exitValue() + "\n" + output, "the power-loss tests mount LazyFS");
                }
                if (System.nanoTime() > deadline) {
                    String output = mount.log();
                    mount.close();
                    throw new AssertionError("LazyFS did not mount " + mountpoint + " within " + WAIT_SECONDS + " s:\n"
                            + output);
                }
                Thread.sleep(20);
            }
            return mount;
        } catch (InterruptedException e) {
            mount.close();
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while mounting LazyFS", e);
        } catch (IOException | RuntimeException | Error e) {
            mount.close();
            throw e;
        }
    }

    private static Path binary(Unavailable unavailable) {
        String configured = System.getenv("PAGEWISE_LAZYFS");
        if (configured != null && !configured.isEmpty()) {
            Path path = Path.of(configured);
            if (!Files.isExecutable(path)) {
                skip(unavailable, "PAGEWISE_LAZYFS=" + configured + " is not an executable",
                        "the power-loss tests need LazyFS");
            }
            return path;
        }
        if (Files.isExecutable(DEFAULT_BUILD)) return DEFAULT_BUILD;
        Path onPath = onPath("lazyfs");
        if (onPath != null) return onPath;
        Path script = Path.of(System.getProperty("user.dir")).resolve("../shared/tools/lazyfs/build.sh").normalize();
        skip(unavailable, "LazyFS is not built: run bash " + script + " and set PAGEWISE_LAZYFS to the path it "
                + "prints (or leave it at " + DEFAULT_BUILD + ")", "the power-loss tests need LazyFS");
        return null;
    }

    private static void skip(Unavailable unavailable, String message, String why) {
        unavailable.unavailable(message, why);
        throw new IllegalStateException("LazyFsMount.Unavailable returned instead of skipping: " + message);
    }

    private static Path onPath(String program) {
        for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            Path candidate = Path.of(dir, program);
            if (Files.isExecutable(candidate)) return candidate;
        }
        return null;
    }

    /** Runs a short command; {@return null when it exits with 0, else its status and output} */
    private static String run(String... command) throws IOException {
        Process process = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null"))).start();
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                ChildProcesses.stop(process);
                return "did not finish in 10 s";
            }
            String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            return process.exitValue() == 0 ? null : "exit " + process.exitValue() + ": " + output.strip();
        } catch (InterruptedException e) {
            ChildProcesses.stop(process);
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while running " + String.join(" ", command), e);
        }
    }


    /** {@return the mounted directory: files the code under test writes go here} */
    public Path mountpoint() {
        return mountpoint;
    }

    /** {@return name on the mount} */
    public Path file(String name) {
        return mountpoint.resolve(name);
    }

    /**
     * Creates name on the mount holding data, written and fsynced through the mount: durable data to start from,
     * which LazyFS also has cached (it cannot serve an O_DIRECT read from its backing file, which it opens with
     * O_DIRECT and reads into unaligned buffers). {@return its path on the mount}
     */
    public Path durableFile(String name, byte[] data) throws IOException {
        Path file = file(name);
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            channel.write(ByteBuffer.wrap(data), 0);
            channel.force(true);
        }
        return file;
    }

    /**
     * The backing file behind name on the mount: what is on "stable storage". Written before the mount opens it,
     * it is durable data to start from; read after {@link #powerCut()}, it is what survived.
     *
     * @param name the file's name on the mount
     * @return its path in the backing directory
     */
    public Path backing(String name) {
        return backing.resolve(name);
    }

    /**
     * Cuts the power: LazyFS drops every byte not yet synced, of every file on the mount. Returns once LazyFS
     * says its cache is cleared.
     *
     * @throws IOException when LazyFS is gone or does not confirm within the time limit
     */
    public void powerCut() throws IOException, InterruptedException {
        if (!process.isAlive()) throw new IOException("LazyFS exited with " + process.exitValue() + ":\n" + log());
        int before = count(log(), CLEARED);
        // A FIFO write blocks while there is no reader: write from a thread that may be abandoned.
        Thread writer = new Thread(() -> {
            try (OutputStream out = Files.newOutputStream(fifo)) {
                out.write("lazyfs::clear-cache\n".getBytes(StandardCharsets.US_ASCII));
            } catch (IOException e) {
                // seen below as a missing confirmation
            }
        }, "lazyfs-power-cut");
        writer.setDaemon(true);
        writer.start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        while (count(log(), CLEARED) <= before) {
            if (System.nanoTime() > deadline) {
                writer.interrupt();
                throw new IOException("LazyFS did not clear its cache within " + WAIT_SECONDS + " s:\n" + log());
            }
            Thread.sleep(5);
        }
    }

    /**
     * Fails unless the backing file of name holds exactly expected (its size included), naming how many blocks of
     * blockSize bytes were lost and where the first one is.
     *
     * @param name      the file's name on the mount
     * @param expected  the bytes that must have survived the cut
     * @param blockSize the unit in which losses are counted
     * @param what      what was done to the file, for the message
     * @throws IOException when the backing file cannot be read
     */
    public void assertSurvived(String name, byte[] expected, int blockSize, String what) throws IOException {
        byte[] actual = Files.readAllBytes(backing(name));
        int blocks = (expected.length + blockSize - 1) / blockSize;
        int lost = 0;
        long firstLost = -1;
        for (int b = 0; b < blocks; b++) {
            int from = b * blockSize;
            int to = Math.min(expected.length, from + blockSize);
            boolean same = actual.length >= to
                    && java.util.Arrays.equals(expected, from, to, actual, from, to);
            if (!same) {
                lost++;
                if (firstLost < 0) firstLost = from;
            }
        }
        if (lost > 0 || actual.length != expected.length) {
            throw new AssertionError(what + ": after the power cut " + lost + " of " + blocks + " blocks of " + blockSize
                    + " bytes are lost" + (firstLost >= 0 ? " (the first at offset " + firstLost + ")" : "") + "; the file has "
                    + actual.length + " bytes, " + expected.length + " expected");
        }
    }

    /** {@return what LazyFS printed so far} */
    public String log() throws IOException {
        return Files.exists(log) ? Files.readString(log, StandardCharsets.UTF_8) : "";
    }

    private static int count(String text, String what) {
        int n = 0;
        for (int at = text.indexOf(what); at >= 0; at = text.indexOf(what, at + what.length())) n++;
        return n;
    }

    private boolean isMounted() throws IOException {
        String needle = " " + mountpoint + " ";
        for (String line : Files.readAllLines(Path.of("/proc/self/mountinfo"))) {
            if (line.contains(needle) && line.contains("fuse")) return true;
        }
        return false;
    }

    /** Unmounts, stops LazyFS and deletes the mount's directories; safe to call twice. */
    @Override
    public void close() {
        cleanUp();
        try {
            Runtime.getRuntime().removeShutdownHook(cleanupHook);
        } catch (IllegalStateException shuttingDown) {
            // the hook is running or has run
        }
    }

    private synchronized void cleanUp() {
        if (closed) return;
        closed = true;
        List<String> problems = new ArrayList<>();
        try {
            if (isMounted()) {
                if (runQuietly("fusermount3", "-u", mountpoint.toString()) != null || isMounted()) {
                    String lazy = runQuietly("umount", "-l", mountpoint.toString());
                    if (lazy != null) problems.add("could not unmount " + mountpoint + ": " + lazy);
                }
            }
        } catch (IOException e) {
            problems.add(e.toString());
        }
        ChildProcesses.stop(process);
        try {
            if (!isMounted()) deleteTree(root);
        } catch (IOException e) {
            problems.add("could not delete " + root + ": " + e);
        }
        if (!problems.isEmpty()) System.err.println("LazyFsMount: " + String.join("; ", problems));
    }

    /** {@return null when command exits with 0, else what went wrong} */
    private static String runQuietly(String... command) {
        try {
            return run(command);
        } catch (IOException e) {
            return e.toString();
        }
    }

    private static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) return;
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path p : (Iterable<Path>) paths.sorted(Comparator.reverseOrder())::iterator) Files.deleteIfExists(p);
        }
    }

    /** For {@code @MethodSource}: the modes whose flush and FUA make data durable, what power-loss tests cut under. */
    public static java.util.stream.Stream<io.pagewise.CacheMode> durableModes() {
        return java.util.Arrays.stream(io.pagewise.CacheMode.values()).filter(io.pagewise.CacheMode::flushSyncs);
    }

    /** For {@code @MethodSource}: the modes in which every write is durable before it returns. */
    public static java.util.stream.Stream<io.pagewise.CacheMode> everyWriteModes() {
        return java.util.Arrays.stream(io.pagewise.CacheMode.values()).filter(io.pagewise.CacheMode::syncsEveryWrite);
    }
}

package io.pagewise.testing;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** nbdkit or qemu-nbd as a child process on a Unix socket in a temp dir; close() kills it. */
public final class NbdChildServer implements AutoCloseable {
    private final Process process;
    private final Path socket;
    private final Path log;

    private NbdChildServer(Process process, Path socket, Path log) {
        this.process = process;
        this.socket = socket;
        this.log = log;
    }

    /** {@code nbdkit -f -U SOCKET ARGS...}, e.g. {@code nbdkit(dir, "memory", "64M")}. */
    public static NbdChildServer nbdkit(Path dir, String... args) throws IOException {
        ExternalTools.require("nbdkit");
        Path socket = dir.resolve("nbdkit-" + System.nanoTime() + ".sock");
        List<String> command = new ArrayList<>(List.of("nbdkit", "-f", "-U", socket.toString()));
        command.addAll(List.of(args));
        return start(command, socket, dir);
    }

    /** {@code qemu-nbd} serving a raw file, persistent, with several clients allowed. */
    public static NbdChildServer qemuNbd(Path dir, Path file) throws IOException {
        ExternalTools.require("qemu-nbd");
        Path socket = dir.resolve("qemu-nbd-" + System.nanoTime() + ".sock");
        return start(List.of("qemu-nbd", "-k", socket.toString(), "-f", "raw", "-t", "-e", "16",
                "--cache=writeback", file.toString()), socket, dir);
    }

    private static NbdChildServer start(List<String> command, Path socket, Path dir) throws IOException {
        Path log = dir.resolve(socket.getFileName() + ".log");
        Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        NbdChildServer server = new NbdChildServer(process, socket, log);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IOException(String.join(" ", command) + " exited with " + process.exitValue() + ": "
                        + Files.readString(log, StandardCharsets.UTF_8));
            }
            if (Files.exists(socket)) {
                try (SocketChannel probe = SocketChannel.open(StandardProtocolFamily.UNIX)) {
                    probe.connect(UnixDomainSocketAddress.of(socket));
                    return server;
                } catch (IOException notYet) {
                    // listening starts after the socket file appears
                }
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                server.close();
                Thread.currentThread().interrupt();
                throw new IOException("interrupted", e);
            }
        }
        server.close();
        throw new IOException(String.join(" ", command) + " did not listen on " + socket + " within 20 s");
    }

    public String uri() {
        return "nbd+unix:///?socket=" + socket;
    }

    public Path socket() {
        return socket;
    }

    /** Kills the server at once (SIGKILL), as a crash would. */
    public void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
    }

    public String log() throws IOException {
        return Files.exists(log) ? Files.readString(log, StandardCharsets.UTF_8) : "";
    }

    @Override
    public void close() {
        ExternalTools.stop(process);
    }
}

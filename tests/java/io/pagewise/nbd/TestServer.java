package io.pagewise.nbd;

import io.pagewise.CacheMode;
import io.pagewise.backends.FileDevice;
import io.pagewise.nbd.server.NbdServer;
import io.pagewise.testing.RecordingLogger;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;

/** An in-process server on a Unix socket in a temp dir, over a sparse file, closed with everything it opened. */
public final class TestServer implements AutoCloseable {
    public final Path file;
    public final FileDevice export;
    public final NbdServer server;
    /** What the server logged at INFO and above. */
    public final RecordingLogger log = new RecordingLogger("[server] ", System.Logger.Level.INFO);

    private TestServer(Path file, FileDevice export, NbdServer.Builder builder, Path socket) throws IOException {
        this.file = file;
        this.export = export;
        this.server = builder.unixSocket(socket).logger(log).start();
    }

    /** A sparse file of size bytes in dir, served as "" under mode; configure adds exports or settings. */
    public static TestServer start(Path dir, long size, CacheMode mode, boolean readOnly,
                            java.util.function.Consumer<NbdServer.Builder> configure) throws IOException {
        Path file = dir.resolve("disk.img");
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
            raf.setLength(size);
        }
        FileDevice export = readOnly ? FileDevice.open(file, mode, java.nio.file.StandardOpenOption.READ)
                : FileDevice.open(file, mode, java.nio.file.StandardOpenOption.READ, java.nio.file.StandardOpenOption.WRITE);
        NbdServer.Builder builder = NbdServer.builder().export("", "test disk", export);
        if (configure != null) configure.accept(builder);
        try {
            return new TestServer(file, export, builder, dir.resolve("nbd.sock"));
        } catch (IOException | RuntimeException e) {
            export.close();
            throw e;
        }
    }

    public static TestServer start(Path dir, long size, CacheMode mode) throws IOException {
        return start(dir, size, mode, false, null);
    }

    public String uri() {
        return server.uri();
    }

    public Path socket() {
        return ((java.net.UnixDomainSocketAddress) server.address()).getPath();
    }

    /** {@return a new raw connection to the server's socket}, for a client that speaks the protocol itself */
    public SocketChannel connect() throws IOException {
        return SocketChannel.open(server.address());
    }

    @Override
    public void close() throws IOException {
        try (export; server) {
            // the server first, then its export
        }
    }
}

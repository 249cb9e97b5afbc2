package io.pagewise.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;

/** The Unix-socket plumbing the fuzz targets that need a real socket share. */
public final class FuzzSockets {
    private FuzzSockets() {}

    /** A listener on a socket named name in a fresh temp directory; both are deleted when the JVM exits. */
    public static ServerSocketChannel listen(String name) {
        try {
            Path socket = Files.createTempDirectory("pagewise-fuzz").resolve(name);
            // Deleted at exit in the reverse order: the socket, then its directory.
            socket.getParent().toFile().deleteOnExit();
            socket.toFile().deleteOnExit();
            ServerSocketChannel listener = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
            listener.bind(UnixDomainSocketAddress.of(socket));
            return listener;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Reads and drops everything until end of stream or a reset; the bytes read. */
    public static long drain(SocketChannel channel) {
        ByteBuffer sink = ByteBuffer.allocate(256 << 10);
        long total = 0;
        try {
            for (int n; (n = channel.read(sink.clear())) >= 0; ) total += n;
        } catch (IOException reset) {
            // the peer closed first: the connection ended all the same
        }
        return total;
    }
}

package io.pagewise.nbd.server.service;

import io.pagewise.nbd.server.access.AddressRange;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.net.ConnectException;
import java.net.Inet6Address;
import java.net.InetSocketAddress;
import java.net.ProtocolFamily;
import java.net.SocketAddress;
import java.net.StandardProtocolFamily;
import java.net.StandardSocketOptions;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;

/**
 * The server's listening socket, TCP or Unix, and the socket file of a Unix one: a stale socket file is replaced
 * when binding, and the file is removed at the end only if it is still the one this listener created.
 */
public final class Listener implements AutoCloseable {
    private final ServerSocketChannel channel;
    private final SocketAddress address;
    private final Path socketFile;
    /** The device and inode of the socket file bind() created: the file at that path later may be another's. */
    private final Object socketFileKey;

    /** False for a socket passed in (socket activation): whoever made it owns its socket file. */
    private final boolean ownsSocketFile;

    private Listener(ServerSocketChannel channel, SocketAddress address, Path socketFile, Object socketFileKey) {
        this(channel, address, socketFile, socketFileKey, true);
    }

    private Listener(ServerSocketChannel channel, SocketAddress address, Path socketFile, Object socketFileKey,
                     boolean ownsSocketFile) {
        this.channel = channel;
        this.address = address;
        this.socketFile = socketFile;
        this.socketFileKey = socketFileKey;
        this.ownsSocketFile = ownsSocketFile;
    }

    /** Listens on a socket bound and listening already (systemd's, from socket activation); its file stays at the end. */
    public static Listener adopt(ServerSocketChannel channel) throws IOException {
        if (!channel.isOpen()) throw new IOException("the listening socket passed in is closed");
        channel.configureBlocking(true);
        SocketAddress address = channel.getLocalAddress();
        if (address == null) throw new IOException("the socket passed in is not bound");
        Path socketFile = address instanceof UnixDomainSocketAddress ? ((UnixDomainSocketAddress) address).getPath() : null;
        return new Listener(channel, address, socketFile, null, false);
    }

    /**
     * Binds an address: an {@link InetSocketAddress} (SO_REUSEADDR) or a {@link UnixDomainSocketAddress}, where a
     * socket file nobody listens on is replaced and anything else there is refused.
     */
    public static Listener bind(SocketAddress requested) throws IOException {
        Path socketFile = null;
        ServerSocketChannel channel;
        if (requested instanceof UnixDomainSocketAddress) {
            socketFile = ((UnixDomainSocketAddress) requested).getPath();
            removeStaleSocket(socketFile);
            channel = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        } else {
            InetSocketAddress inet = (InetSocketAddress) requested;
            ProtocolFamily family = inet.getAddress() instanceof Inet6Address
                    ? StandardProtocolFamily.INET6 : StandardProtocolFamily.INET;
            channel = ServerSocketChannel.open(family);
            channel.setOption(StandardSocketOptions.SO_REUSEADDR, true);
        }
        try {
            channel.bind(requested, 128);
            return new Listener(channel, channel.getLocalAddress(), socketFile,
                    socketFile != null ? fileKey(socketFile) : null);
        } catch (IOException e) {
            channel.close();
            throw new IOException("cannot listen on " + AddressRange.describe(requested) + ": " + e.getMessage(), e);
        }
    }

    /** {@return the bound address}: the real port when port 0 was asked for */
    public SocketAddress address() { return address; }

    /** {@return the socket file of a Unix listener, or null for TCP} */
    public Path socketFile() { return socketFile; }

    /** {@return true for a Unix socket} */
    public boolean isUnix() { return socketFile != null; }

    /** Waits for the next connection; {@link java.nio.channels.ClosedChannelException} once closed. */
    SocketChannel accept() throws IOException {
        return channel.accept();
    }

    /** Stops listening; connections already accepted are not affected. */
    @Override
    public void close() throws IOException {
        channel.close();
    }

    /** Removes the socket file only if it is still the one bind() created, not one another server put there since. */
    public void removeOwnSocket(System.Logger log) throws IOException {
        if (socketFile == null || !ownsSocketFile) return;
        Object key;
        try {
            key = fileKey(socketFile);
        } catch (NoSuchFileException e) {
            return;
        }
        if (key != null && key.equals(socketFileKey)) {
            Files.deleteIfExists(socketFile);
        } else {
            log.log(Level.WARNING, "left " + socketFile + " in place: it is no longer the socket this server created");
        }
    }

    private static void removeStaleSocket(Path path) throws IOException {
        if (!Files.exists(path, LinkOption.NOFOLLOW_LINKS)) return;
        if (!isSocket(path)) throw new IOException("cannot listen on " + path + ": it exists and is not a socket");
        try (SocketChannel probe = SocketChannel.open(UnixDomainSocketAddress.of(path))) {
            throw new IOException("cannot listen on " + path + ": another server is listening there");
        } catch (ConnectException e) {
            Files.delete(path);
        }
    }

    /** The file's identity (device and inode on Linux). */
    private static Object fileKey(Path path) throws IOException {
        return Files.readAttributes(path, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS).fileKey();
    }

    private static boolean isSocket(Path path) {
        try {
            Object mode = Files.getAttribute(path, "unix:mode", LinkOption.NOFOLLOW_LINKS);
            return ((Integer) mode & 0170000) == 0140000;
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
            return false;
        }
    }
}

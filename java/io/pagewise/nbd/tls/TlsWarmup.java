package io.pagewise.nbd.tls;

import io.pagewise.nbd.tls.AnyServerTrust;
import io.pagewise.nbd.tls.TlsChannel;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ByteChannel;
import java.nio.channels.Pipe;
import java.security.GeneralSecurityException;
import java.util.concurrent.atomic.AtomicReference;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.TrustManager;

/**
 * Sends data through a TLS session between two engines of this process, over in-memory pipes, so that the JIT
 * compiles the JDK's record and AES-GCM code before clients need it. Until C2 has compiled that code the JDK encrypts
 * at tens of MB/s, and compiling it takes a second or more of CPU: without a warm-up, the first GiB a fresh server
 * sends over TLS goes at about half the speed of later ones. Interrupting the thread that runs it stops it.
 */
public final class TlsWarmup {
    /** How much a server sends through its warm-up: enough for C2 to compile the record path (measured: 16 MiB). */
    public static final long DEFAULT_BYTES = 64L << 20;
    private static final int PAYLOAD = 256 * 1024;

    private TlsWarmup() {}

    /**
     * Runs a handshake with the server's context, then sends {@code bytes} in read-reply-shaped writes (a small
     * header in a heap buffer and a payload in a direct one) from the server side to the client side.
     *
     * @param context the server's context (its certificate and key; client certificates are not asked for)
     * @param bytes how much to send
     * @throws IOException when the session fails or the thread is interrupted
     */
    public static void run(SSLContext context, long bytes) throws IOException {
        SSLEngine server = context.createSSLEngine();
        server.setUseClientMode(false);
        SSLEngine client = clientContext().createSSLEngine();
        client.setUseClientMode(true);
        Pipe toServer = Pipe.open();
        Pipe toClient = Pipe.open();
        ByteChannel serverSide = new Duplex(toServer.source(), toClient.sink());
        ByteChannel clientSide = new Duplex(toClient.source(), toServer.sink());
        AtomicReference<IOException> readFailure = new AtomicReference<>();
        Thread reader = new Thread(() -> {
            try {
                readAll(clientSide, client);
            } catch (IOException e) {
                readFailure.set(e);
            } catch (RuntimeException e) {
                readFailure.set(new IOException(e.toString(), e));
            }
        }, "nbd-tls-warmup-reader");
        reader.setDaemon(true);
        reader.start();
        IOException failure = null;
        try (TlsChannel tls = TlsChannel.handshake(serverSide, server)) {
            ByteBuffer header = ByteBuffer.allocate(20);
            ByteBuffer payload = ByteBuffer.allocateDirect(PAYLOAD);
            ByteBuffer[] reply = {header, payload};
            for (long done = 0; done < bytes; ) {
                header.clear();
                payload.clear();
                done += tls.write(reply);
            }
        } catch (IOException e) {
            failure = e;
            // The reader may wait for bytes that will never come.
            clientSide.close();
        } finally {
            serverSide.close();
            joinQuietly(reader);
            clientSide.close();
        }
        IOException readerFailure = readFailure.get();
        if (readerFailure != null) {
            // The side that failed first says why; the other one only saw its peer go away.
            if (failure != null) readerFailure.addSuppressed(failure);
            throw readerFailure;
        }
        if (failure != null) throw failure;
    }

    /** Waits for a thread whose channels are closed (so it ends soon), keeping the caller's interrupt. */
    private static void joinQuietly(Thread thread) {
        boolean interrupted = Thread.interrupted();
        try {
            thread.join(10_000);
        } catch (InterruptedException e) {
            interrupted = true;
        }
        if (interrupted) Thread.currentThread().interrupt();
    }

    /** Reads until the server side's close_notify. */
    private static void readAll(ByteChannel channel, SSLEngine engine) throws IOException {
        try (TlsChannel tls = TlsChannel.handshake(channel, engine)) {
            ByteBuffer buffer = ByteBuffer.allocate(PAYLOAD);
            do {
                buffer.clear();
            } while (tls.read(buffer) >= 0);
        }
    }

    /** The client side talks only to the server engine above, in this process: it has nothing to verify. */
    private static SSLContext clientContext() throws IOException {
        try {
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(null, new TrustManager[] {AnyServerTrust.INSTANCE}, null);
            return context;
        } catch (GeneralSecurityException e) {
            throw new IOException(e.getMessage(), e);
        }
    }

    /** One direction of a pipe to read and the other's to write. */
    private record Duplex(Pipe.SourceChannel in, Pipe.SinkChannel out) implements ByteChannel {
        @Override
        public int read(ByteBuffer dst) throws IOException {
            return in.read(dst);
        }

        @Override
        public int write(ByteBuffer src) throws IOException {
            return out.write(src);
        }

        @Override
        public boolean isOpen() {
            return in.isOpen() && out.isOpen();
        }

        @Override
        public void close() throws IOException {
            try {
                out.close();
            } finally {
                in.close();
            }
        }
    }
}

package io.pagewise.nbd.tls;

import io.pagewise.nbd.TlsMode;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.util.concurrent.TimeUnit;

/**
 * A server's TLS in one place: its settings, and the warm-up that compiles the TLS code before the first client
 * needs it, stopped as soon as a client's own TLS session can do that instead.
 */
public final class ServerTls {
    private final TlsSettings settings;
    private final long warmupBytes;
    private final System.Logger log;
    private final Thread warmup;
    private volatile boolean clientArrived;
    private volatile boolean stopping;

    /** TLS with these settings; {@link TlsSettings#OFF} for none. The warm-up sends warmupBytes through TLS. */
    public ServerTls(TlsSettings settings, long warmupBytes, System.Logger log) {
        this.settings = settings;
        this.warmupBytes = warmupBytes;
        this.log = log;
        this.warmup = new Thread(this::warmUp, "nbd-tls-warmup");
        warmup.setDaemon(true);
    }

    /** {@return the settings the handshake uses} */
    public TlsSettings settings() { return settings; }

    /** {@return whether TLS is off, offered or required} */
    public TlsMode mode() { return settings.mode(); }

    /** Starts the warm-up when TLS is on. */
    public void start() {
        if (settings.mode() != TlsMode.OFF) warmup.start();
    }

    /** A client's own TLS traffic warms the code up from here: the warm-up would only take CPU from it. */
    public void clientArrived() {
        if (clientArrived) return;
        clientArrived = true;
        warmup.interrupt();
    }

    /** Stops the warm-up and waits for it. */
    public void stop() throws InterruptedException {
        stopping = true;
        warmup.interrupt();
        if (warmup.isAlive()) warmup.join(10_000);
    }

    private void warmUp() {
        long start = System.nanoTime();
        try {
            TlsWarmup.run(settings.context(), warmupBytes);
            log.log(Level.DEBUG, () -> "TLS warm-up: sent " + (warmupBytes >> 20) + " MiB in "
                    + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start) + " ms");
        } catch (IOException | RuntimeException e) {
            if (stopping) return;
            if (clientArrived) {
                log.log(Level.DEBUG, () -> "TLS warm-up: stopped after "
                        + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start) + " ms, a client's TLS session takes over");
            } else {
                // Clients are served all the same, only the first ones more slowly.
                log.log(Level.DEBUG, "TLS warm-up failed: " + e);
            }
        }
    }
}

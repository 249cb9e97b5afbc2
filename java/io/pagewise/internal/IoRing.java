package io.pagewise.internal;

import io.pagewise.system.NativeIOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;

/**
 * An io_uring submission and completion ring, by raw system calls (no liburing): requests go in batches, each in
 * one io_uring_enter, and come back as (tag, result) pairs. The ring holds at most {@link #entries()} requests in
 * flight; the caller keeps it so. One thread submits at a time ({@link #submit} is synchronized) and one thread reaps.
 */
public final class IoRing implements AutoCloseable {
    /** Operations, as {@code native/io_ring.c} numbers them. */
    public static final int NOP = 0;
    public static final int READ = 1;
    public static final int WRITE = 2;
    /** What a NOP's completion carries as its result. */
    private static final Path NO_PATH = Path.of("io_uring");

    private final long handle;
    private final int entries;
    private volatile boolean closed;

    private IoRing(long handle, int entries) {
        this.handle = handle;
        this.entries = entries;
    }

    /**
     * {@return a ring for entries requests in flight}
     *
     * @throws NativeIOException ENOSYS where the kernel has no io_uring or is older than 5.6, ENOSYS or EPERM where
     *         a seccomp profile or {@code kernel.io_uring_disabled} refuses it
     */
    public static IoRing open(int entries) throws NativeIOException {
        long handle = IoRingBinding.open(entries);
        if (handle < 0) throw Errno.exception(handle, "io_uring_setup", NO_PATH, 0, entries);
        return new IoRing(handle, entries);
    }

    /** {@return how many requests the ring holds at most} */
    public int entries() {
        return entries;
    }

    /**
     * Queues count requests and submits them together. Each is ops[i] on fds[i], of lengths[i] bytes of the direct
     * buffer buffers[i] from positions[i], at offsets[i], with flags[i] ({@link PositionalIo#DONTCACHE},
     * {@link PositionalIo#DSYNC}); its completion carries tags[i].
     *
     * @throws NativeIOException when io_uring_enter refused them all (none is in flight then)
     */
    public synchronized void submit(int count, int[] ops, int[] fds, ByteBuffer[] buffers, int[] positions,
                                    int[] lengths, long[] offsets, int[] flags, long[] tags) throws NativeIOException {
        if (closed) throw new IllegalStateException("the io_uring ring is closed");
        int rc = IoRingBinding.submit(handle, count, ops, fds, buffers, positions, lengths, offsets, flags, tags);
        if (rc < 0) throw Errno.exception(rc, "io_uring_enter", NO_PATH, 0, count);
    }

    /**
     * Waits until at least min requests have completed, then takes as many completions as the arrays hold.
     *
     * @return how many were taken: tags[i] and results[i] (bytes transferred, or -errno)
     */
    public int reap(int min, long[] tags, int[] results) throws NativeIOException {
        int rc = IoRingBinding.reap(handle, min, tags, results);
        if (rc < 0) throw Errno.exception(rc, "io_uring_enter (GETEVENTS)", NO_PATH, 0, min);
        return rc;
    }

    /** Unmaps the ring and closes it; no request may be in flight and no thread reaping. */
    @Override
    public synchronized void close() throws NativeIOException {
        if (closed) return;
        closed = true;
        int rc = IoRingBinding.close(handle);
        if (rc < 0) throw Errno.exception(rc, "close", NO_PATH, 0, 0);
    }
}

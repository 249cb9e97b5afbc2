package io.pagewise.internal;

import io.pagewise.system.Alignment;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.AsynchronousFileChannel;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.FileChannel;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.HashSet;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;

/**
 * The pure-Java path, used when the native library cannot load: FileChannel positional I/O.
 * Advice and residency are unknown here, so advice does nothing and residency is not available.
 *
 * <p>Interrupts do nothing to the file, as on the native path. A FileChannel is an interruptible channel: an
 * interrupt of a thread in one of its calls closes it for every thread, and a thread whose interrupt status is set
 * closes it with its next call. So each call here first clears the caller's status (and sets it again when the call
 * returns), and the file is open twice: a FileChannel, used in the caller's thread, and an
 * {@link AsynchronousFileChannel} on the same file, which no interrupt closes (its reads and writes run on a pool
 * thread; the caller waits for them through interrupts). Should an interrupt land during a call and close the
 * FileChannel, that call and every later one go to the second channel, each read or write handed to the pool:
 * slower, but the file stays open and no call is lost (a read or write cut short is done again whole).
 */
public final class ChannelRawFile implements RawFile {
    private final Path path;
    /** Reads and writes in the caller's thread; null once an interrupt closed it. */
    private volatile FileChannel fast;
    /** The same file, never closed by an interrupt: it takes over when fast is lost. */
    private final AsynchronousFileChannel steady;
    private final IoCounters counters = new IoCounters();

    private ChannelRawFile(Path path, FileChannel fast, AsynchronousFileChannel steady) {
        this.path = path;
        this.fast = fast;
        this.steady = steady;
    }

    /** Opens path; fails with the same exceptions as {@link NativeRawFile#open} where the JDK's say which errno. */
    public static ChannelRawFile open(Path path, Set<? extends OpenOption> options) throws IOException {
        FileChannel fast;
        try {
            fast = FileChannel.open(path, options);
        } catch (FileSystemException e) {
            throw Errno.openFailure(e, "open", path);
        }
        try {
            Object opened = fileKey(path);
            Set<OpenOption> again = new HashSet<>(options);
            again.removeAll(Set.of(StandardOpenOption.CREATE, StandardOpenOption.CREATE_NEW,
                    StandardOpenOption.TRUNCATE_EXISTING));
            // The JDK's default pool does the second channel's reads and writes; its daemon threads are never interrupted.
            AsynchronousFileChannel steady = AsynchronousFileChannel.open(path, again, null);
            if (!Objects.equals(opened, fileKey(path))) {
                steady.close();
                throw new IOException(path + " was replaced by another file while it was being opened");
            }
            return new ChannelRawFile(path, fast, steady);
        } catch (FileSystemException e) {
            fast.close();
            throw Errno.openFailure(e, "open", path);
        } catch (IOException | RuntimeException e) {
            fast.close();
            throw e;
        }
    }

    /** The file's identity where the platform has one (device and inode on Unix), else null. */
    private static Object fileKey(Path path) throws IOException {
        return Files.readAttributes(path, BasicFileAttributes.class).fileKey();
    }

    @Override public Path path() { return path; }

    @Override public long readaheadBytes() { return DEFAULT_READAHEAD; }

    @Override public boolean isNative() { return false; }

    @Override public boolean isBlockDevice() { return false; }

    @Override public boolean usesPageCache() { return true; }

    @Override public Alignment alignment() { return new Alignment(4096, 4096, 4096); }

    /** FileChannel's scatter read uses the channel's shared position, so each buffer is read at its own offset. */
    @Override
    public long read(IoVector request, int flags) throws IOException {
        long offset = request.offset();
        long total = 0;
        for (ByteBuffer dst : request.buffers()) {
            while (dst.hasRemaining()) {
                long at = offset + total;
                int n = call(dst, c -> c.read(dst, at), c -> await(c.read(dst, at)));
                if (n < 0) return total;
                total += n;
            }
        }
        return total;
    }

    @Override
    public void write(IoVector request, int flags) throws IOException {
        long offset = request.offset();
        long at = offset;
        for (ByteBuffer src : request.buffers()) {
            while (src.hasRemaining()) {
                long here = at;
                at += call(src, c -> c.write(src, here), c -> await(c.write(src, here)));
            }
        }
        if ((flags & DSYNC) == 0) return;
        dataSync(); // no RWF_DSYNC here: a sync of the file makes the write durable
        counters.wrote(flags, at - offset);
    }

    @Override
    public void dataSync() throws IOException {
        call(null, c -> {
            c.force(false);
            return 0;
        }, c -> {
            c.force(false);
            return 0;
        });
        counters.synced();
    }

    @Override public IoCounters counters() { return counters; }

    @Override public void advise(long offset, long length, int advice) {}

    @Override public void syncRange(long offset, long length, int flags) {}

    @Override public long size() throws IOException { return call(null, FileChannel::size, AsynchronousFileChannel::size); }

    @Override
    public void truncate(long size) throws IOException {
        long current = size();
        if (size < current) {
            call(null, c -> {
                c.truncate(size);
                return 0;
            }, c -> {
                c.truncate(size);
                return 0;
            });
        } else if (size > current) {
            ByteBuffer one = ByteBuffer.allocate(1); // the channels cannot extend a file otherwise
            call(one, c -> c.write(one, size - 1), c -> await(c.write(one, size - 1)));
        }
    }

    @Override public boolean fallocate(int mode, long offset, long length) { return false; }

    @Override
    public long seek(long offset, int whence) throws IOException {
        long size = size();
        if (offset >= size) return -1;
        return whence == Space.SEEK_DATA ? offset : size;
    }

    @Override public byte[] residentBitmap(long offset, long length) { return null; }

    @Override public long cachedPages(long offset, long length) { return -1; }

    @Override
    public long residentPages(long offset, long length) {
        throw new UnsupportedOperationException("page-cache residency needs the pagewise native library");
    }

    /** Closes both channels; StorageFile calls it once no call is in progress. */
    @Override
    public void close() throws IOException {
        FileChannel channel = fast;
        fast = null;
        try {
            if (channel != null) channel.close();
        } finally {
            steady.close();
        }
    }

    /** A call on the FileChannel. */
    private interface FastCall<T> {
        T run(FileChannel channel) throws IOException;
    }

    /** The same call on the AsynchronousFileChannel. */
    private interface SteadyCall<T> {
        T run(AsynchronousFileChannel channel) throws IOException;
    }

    /**
     * Runs a call on the FileChannel with the caller's interrupt status cleared, or on the steady channel once an
     * interrupt closed the FileChannel (also when it closes during this call: the call is then done again from
     * buffer's position before it, since how far it got is unknown). The status is set again at the end.
     */
    private <T> T call(ByteBuffer buffer, FastCall<T> onFast, SteadyCall<T> onSteady) throws IOException {
        boolean interrupted = Thread.interrupted();
        int start = buffer == null ? 0 : buffer.position();
        try {
            FileChannel channel = fast;
            if (channel != null) {
                try {
                    return onFast.run(channel);
                } catch (ClosedChannelException e) {
                    // ClosedByInterruptException here, AsynchronousCloseException in the other threads in a call.
                    interrupted |= Thread.interrupted();
                    fast = null;
                    if (buffer != null) buffer.position(start);
                }
            }
            return onSteady.run(steady);
        } finally {
            if (interrupted) Thread.currentThread().interrupt();
        }
    }

    /**
     * Waits for a read or write of the steady channel to complete, through interrupts (the thread's status is set
     * again afterwards); its failure is thrown as it was raised.
     */
    private static int await(Future<Integer> call) throws IOException {
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return call.get();
                } catch (InterruptedException e) {
                    interrupted = true;
                } catch (ExecutionException e) {
                    Throwable cause = e.getCause();
                    if (cause instanceof IOException) throw (IOException) cause;
                    if (cause instanceof RuntimeException) throw (RuntimeException) cause;
                    if (cause instanceof Error) throw (Error) cause;
                    throw new IOException(cause);
                }
            }
        } finally {
            if (interrupted) Thread.currentThread().interrupt();
        }
    }
}

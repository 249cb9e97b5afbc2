package io.pagewise.internal;

import io.pagewise.Alignment;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.FileSystemException;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.util.Set;

/**
 * The pure-Java path, used when the native library cannot load: FileChannel positional I/O.
 * Advice and residency are unknown here, so advice does nothing and residency is not available.
 */
public final class ChannelRawFile implements RawFile {
    private final Path path;
    private final FileChannel channel;
    private final IoCounters counters = new IoCounters();

    private ChannelRawFile(Path path, FileChannel channel) {
        this.path = path;
        this.channel = channel;
    }

    /** Opens path; fails with the same exceptions as {@link NativeRawFile#open} where the JDK's say which errno. */
    public static ChannelRawFile open(Path path, Set<? extends OpenOption> options) throws IOException {
        try {
            return new ChannelRawFile(path, FileChannel.open(path, options));
        } catch (FileSystemException e) {
            throw Errno.openFailure(e, "open", path);
        }
    }

    @Override public Path path() { return path; }

    @Override public long readaheadBytes() { return DEFAULT_READAHEAD; }

    @Override public boolean isNative() { return false; }

    @Override public boolean isBlockDevice() { return false; }

    @Override public boolean usesPageCache() { return true; }

    @Override public Alignment alignment() { return new Alignment(4096, 4096, 4096); }

    /** FileChannel's scatter read uses the channel's shared position, so each buffer is read at its own offset. */
    @Override
    public long read(ByteBuffer[] dsts, long offset, int flags) throws IOException {
        long total = 0;
        for (ByteBuffer dst : dsts) {
            while (dst.hasRemaining()) {
                int n = channel.read(dst, offset + total);
                if (n < 0) return total;
                total += n;
            }
        }
        return total;
    }

    @Override
    public void write(ByteBuffer[] srcs, long offset, int flags) throws IOException {
        long at = offset;
        for (ByteBuffer src : srcs) {
            while (src.hasRemaining()) at += channel.write(src, at);
        }
        if ((flags & DSYNC) == 0) return;
        dataSync(); // no RWF_DSYNC here: a sync of the file makes the write durable
        counters.wrote(flags, at - offset);
    }

    @Override
    public void dataSync() throws IOException {
        channel.force(false);
        counters.synced();
    }

    @Override public IoCounters counters() { return counters; }

    @Override public void advise(long offset, long length, int advice) {}

    @Override public void syncRange(long offset, long length, int flags) {}

    @Override public long size() throws IOException { return channel.size(); }

    @Override
    public void truncate(long size) throws IOException {
        long current = channel.size();
        if (size < current) {
            channel.truncate(size);
        } else if (size > current) {
            channel.write(ByteBuffer.allocate(1), size - 1); // FileChannel cannot extend otherwise
        }
    }

    @Override public boolean fallocate(int mode, long offset, long length) { return false; }

    @Override
    public long seek(long offset, int whence) throws IOException {
        long size = channel.size();
        if (offset >= size) return -1;
        return whence == Space.SEEK_DATA ? offset : size;
    }

    @Override public byte[] residentBitmap(long offset, long length) { return null; }

    @Override public long cachedPages(long offset, long length) { return -1; }

    @Override
    public long residentPages(long offset, long length) {
        throw new UnsupportedOperationException("page-cache residency needs the pagewise native library");
    }

    @Override public void close() throws IOException { channel.close(); }

}

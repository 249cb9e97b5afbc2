package io.pagewise.policy;

import io.pagewise.CacheMode;
import io.pagewise.internal.RawFile;
import java.io.IOException;
import io.pagewise.internal.IoVector;

/**
 * Buffered I/O through the page cache (WRITEBACK, WRITETHROUGH, UNSAFE): the mode's durability decides whether a
 * write goes out with RWF_DSYNC and whether flush is an fdatasync.
 */
final class BufferedPolicy implements CachePolicy {
    private final RawFile file;
    private final CacheMode mode;

    BufferedPolicy(RawFile file, CacheMode mode) {
        this.file = file;
        this.mode = mode;
    }

    @Override public CacheMode mode() { return mode; }

    @Override public RawFile file() { return file; }

    @Override
    public long read(IoVector request) throws IOException {
        return file.read(request, 0);
    }

    @Override
    public void write(IoVector request, boolean fua) throws IOException {
        boolean durable = mode.syncsEveryWrite() || (fua && mode.flushSyncs());
        file.write(request, durable ? RawFile.DSYNC : 0);
    }

    @Override
    public RingRoute ringRoute(IoVector request, boolean write, boolean fua) {
        int descriptor = file.descriptor();
        if (descriptor < 0) return null;
        boolean durable = write && (mode.syncsEveryWrite() || (fua && mode.flushSyncs()));
        return new RingRoute(descriptor, durable ? RawFile.DSYNC : 0, false, null);
    }

    @Override
    public void flush() throws IOException {
        if (mode.flushSyncs()) file.dataSync();
    }
}

package io.pagewise.policy;

import io.pagewise.CacheMode;
import io.pagewise.internal.RawFile;
import java.io.IOException;
import java.nio.ByteBuffer;

/** Buffered I/O through the page cache; flush is fdatasync, FUA writes use RWF_DSYNC. */
class WritebackPolicy implements CachePolicy {
    protected final RawFile file;

    WritebackPolicy(RawFile file) {
        this.file = file;
    }

    @Override public CacheMode mode() { return CacheMode.WRITEBACK; }

    @Override public RawFile file() { return file; }

    @Override
    public long read(ByteBuffer[] dsts, long offset) throws IOException {
        return file.read(dsts, offset, 0);
    }

    @Override
    public void write(ByteBuffer[] srcs, long offset, boolean fua) throws IOException {
        file.write(srcs, offset, fua ? RawFile.DSYNC : 0);
    }

    @Override
    public void flush() throws IOException {
        file.dataSync();
    }
}

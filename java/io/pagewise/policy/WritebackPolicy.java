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
    public int read(ByteBuffer dst, long offset) throws IOException {
        return file.read(dst, offset, 0);
    }

    @Override
    public void write(ByteBuffer src, long offset, boolean fua) throws IOException {
        file.write(src, offset, fua ? RawFile.DSYNC : 0);
    }

    @Override
    public void flush() throws IOException {
        file.dataSync();
    }
}

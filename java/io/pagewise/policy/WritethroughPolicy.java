package io.pagewise.policy;

import io.pagewise.CacheMode;
import io.pagewise.internal.RawFile;
import java.io.IOException;
import java.nio.ByteBuffer;

/** Buffered reads; every write is durable (RWF_DSYNC) before it returns. */
final class WritethroughPolicy extends WritebackPolicy {
    WritethroughPolicy(RawFile file) {
        super(file);
    }

    @Override public CacheMode mode() { return CacheMode.WRITETHROUGH; }

    @Override
    public void write(ByteBuffer[] srcs, long offset, boolean fua) throws IOException {
        file.write(srcs, offset, RawFile.DSYNC);
    }
}

package io.pagewise.policy;

import io.pagewise.CacheMode;
import io.pagewise.internal.RawFile;
import java.io.IOException;
import java.nio.ByteBuffer;

/** Buffered I/O that never waits for the disk: flush and FUA do nothing. For scratch data only. */
final class UnsafePolicy extends WritebackPolicy {
    UnsafePolicy(RawFile file) {
        super(file);
    }

    @Override public CacheMode mode() { return CacheMode.UNSAFE; }

    @Override
    public void write(ByteBuffer[] srcs, long offset, boolean fua) throws IOException {
        file.write(srcs, offset, 0);
    }

    @Override
    public void flush() {}
}

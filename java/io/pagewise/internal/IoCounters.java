package io.pagewise.internal;

import java.util.concurrent.atomic.LongAdder;

/**
 * What a {@link RawFile} asked of the kernel, counted where the calls are made: reads with RWF_DONTCACHE, writes
 * with RWF_DSYNC, whole-file syncs (fdatasync, or FileChannel.force), and writes submitted through Linux AIO. A call
 * that failed is not counted.
 */
public final class IoCounters {
    private final LongAdder dontcacheReads = new LongAdder();
    private final LongAdder dontcacheBytesRead = new LongAdder();
    private final LongAdder dsyncWrites = new LongAdder();
    private final LongAdder dsyncBytesWritten = new LongAdder();
    private final LongAdder syncs = new LongAdder();
    private final LongAdder aioWrites = new LongAdder();

    void read(int flags, long bytes) {
        if ((flags & RawFile.DONTCACHE) == 0) return;
        dontcacheReads.increment();
        dontcacheBytesRead.add(bytes);
    }

    void wrote(int flags, long bytes) {
        if ((flags & RawFile.DSYNC) == 0) return;
        dsyncWrites.increment();
        dsyncBytesWritten.add(bytes);
    }

    void synced() {
        syncs.increment();
    }

    void submittedAio(int writes) {
        aioWrites.add(writes);
    }

    public long dontcacheReads() { return dontcacheReads.sum(); }

    public long dontcacheBytesRead() { return dontcacheBytesRead.sum(); }

    public long dsyncWrites() { return dsyncWrites.sum(); }

    public long dsyncBytesWritten() { return dsyncBytesWritten.sum(); }

    public long syncs() { return syncs.sum(); }

    /** Write syscalls the kernel took by io_submit (each waited for), as {@link RawFile#AIO} asks. */
    public long aioWrites() { return aioWrites.sum(); }
}

package io.pagewise.internal;

import java.util.concurrent.atomic.LongAdder;

/**
 * What a {@link RawFile} asked of the kernel: reads with RWF_DONTCACHE, writes with RWF_DSYNC, whole-file syncs
 * (fdatasync, or FileChannel.force), and writes submitted through Linux AIO. On the native path the flags are
 * counted in C, as the syscalls carried them to the kernel ({@link #asked}), not from the flags Java passed. A call
 * that failed is not counted.
 */
public final class IoCounters {
    private final LongAdder dontcacheReads = new LongAdder();
    private final LongAdder dontcacheBytesRead = new LongAdder();
    private final LongAdder dsyncWrites = new LongAdder();
    private final LongAdder dsyncBytesWritten = new LongAdder();
    private final LongAdder syncs = new LongAdder();
    private final LongAdder aioWrites = new LongAdder();

    /** A native read or write, from what C reported that it asked ({@link PositionalIo} ASKED_* fields). */
    void asked(long[] asked, boolean write) {
        if (!write && asked[PositionalIo.ASKED_DONTCACHE_CALLS] > 0) {
            dontcacheReads.increment();
            dontcacheBytesRead.add(asked[PositionalIo.ASKED_DONTCACHE_BYTES]);
        }
        if (asked[PositionalIo.ASKED_DSYNC_CALLS] > 0) {
            dsyncWrites.increment();
            dsyncBytesWritten.add(asked[PositionalIo.ASKED_DSYNC_BYTES]);
        }
        aioWrites.add(asked[PositionalIo.ASKED_AIO_WRITES]);
    }

    /** A pure-Java write, whose flags are its own (DSYNC there is a sync of the file). */
    void wrote(int flags, long bytes) {
        if ((flags & RawFile.DSYNC) == 0) return;
        dsyncWrites.increment();
        dsyncBytesWritten.add(bytes);
    }

    void synced() {
        syncs.increment();
    }

    public long dontcacheReads() { return dontcacheReads.sum(); }

    public long dontcacheBytesRead() { return dontcacheBytesRead.sum(); }

    public long dsyncWrites() { return dsyncWrites.sum(); }

    public long dsyncBytesWritten() { return dsyncBytesWritten.sum(); }

    public long syncs() { return syncs.sum(); }

    /** Write syscalls the kernel took by io_submit (each waited for), as {@link RawFile#AIO} asks. */
    public long aioWrites() { return aioWrites.sum(); }
}

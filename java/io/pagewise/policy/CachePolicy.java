package io.pagewise.policy;

import io.pagewise.CacheMode;
import io.pagewise.internal.Advice;
import io.pagewise.internal.FileDescriptors;
import io.pagewise.internal.IoVector;
import io.pagewise.internal.RawFile;
import java.io.IOException;

/**
 * What one {@link CacheMode} does on reads, writes, flushes and close. One instance per open file;
 * implementations are thread-safe. A read or write is one whole request, checked where it was made
 * ({@link IoVector}); each buffer's position moves by the bytes transferred to or from it.
 */
public interface CachePolicy {
    /** The mode in effect (DONTCACHE reports EVICT once it has fallen back). */
    CacheMode mode();

    /** @return bytes read; fewer than requested only at end of file (0 at or past it) */
    long read(IoVector request) throws IOException;

    /** @param fua the data is durable when this returns, by this write alone (RWF_DSYNC), not by a sync of the file */
    void write(IoVector request, boolean fua) throws IOException;

    /**
     * How an asynchronous ring can run request in this mode: one read or write of the file's descriptor, which the
     * kernel does as this mode would; or null when the mode must run the request itself (then it runs blocking, on
     * a pool thread). A route that holds something (a lock) releases it in {@link RingRoute#done()}.
     *
     * @param fua for a write: durable when done, by this write alone
     */
    default RingRoute ringRoute(IoVector request, boolean write, boolean fua) {
        return null;
    }

    /** Makes every write so far durable (fdatasync); a mode whose flushes do not sync overrides this. */
    default void flush() throws IOException {
        file().dataSync();
    }

    /** Starts reading a range into the cache; called only where {@link #prefetches()}. */
    default void prefetch(long offset, long length) throws IOException {
        willNeed(file(), offset, length);
    }

    /**
     * WILLNEED for all of [offset, offset + length): the kernel reads at most the readahead size per call (8 MiB
     * here), so a 64 MiB prefetch in one call left 12.5 % cached; one call per readahead-sized piece covers it.
     */
    static void willNeed(RawFile file, long offset, long length) throws IOException {
        long piece = Math.max(file.readaheadBytes(), 128 << 10);
        for (long done = 0; done < length; done += piece) {
            file.advise(offset + done, Math.min(piece, length - done), Advice.WILLNEED);
        }
    }

    /** Whether {@link #prefetch} reads anything into the cache: the mode in effect says, and the pure-Java path cannot advise. */
    default boolean prefetches() {
        return file().isNative() && mode().prefetches();
    }

    /** The alignment of offsets and lengths that need no bounce buffer: 1 except under O_DIRECT. */
    default int requestAlignment() {
        return 1;
    }

    /** Changes the file size. */
    default void resize(long size) throws IOException {
        file().truncate(size);
    }

    /**
     * fallocate ({@link io.pagewise.internal.Space} mode) for zeroing and trimming; false where the file cannot. Policies
     * that read-modify-write partial blocks make it atomic with respect to their writes.
     */
    default boolean fallocate(int mode, long offset, long length) throws IOException {
        return file().fallocate(mode, offset, length);
    }

    /** Finishes pending work (evictions) before the file is closed. */
    default void close() throws IOException {}

    RawFile file();

    /** The policy for a mode on an opened file; the file must have been opened with {@link #openFlags}. */
    static CachePolicy create(CacheMode mode, RawFile file) throws IOException {
        return switch (mode) {
            case WRITEBACK, WRITETHROUGH, UNSAFE -> new BufferedPolicy(file, mode);
            case DIRECT, DIRECTSYNC -> new DirectPolicy(file, mode);
            case EVICT -> new EvictPolicy(file);
            case DONTCACHE -> new DontcachePolicy(file);
        };
    }

    /**
     * Extra {@link FileDescriptors} open flags a mode needs: O_DIRECT for the direct modes, which make every write
     * durable with O_DSYNC; the buffered modes ask for that per write (RWF_DSYNC).
     */
    static int openFlags(CacheMode mode) {
        if (!mode.isDirect()) return 0;
        return FileDescriptors.DIRECT | (mode.syncsEveryWrite() ? FileDescriptors.DSYNC : 0);
    }
}

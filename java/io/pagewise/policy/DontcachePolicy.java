package io.pagewise.policy;

import io.pagewise.CacheMode;
import io.pagewise.NativeIOException;
import io.pagewise.internal.RawFile;
import io.pagewise.jni.Errno;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * Uncached buffered I/O with RWF_DONTCACHE (Linux 6.14+): the kernel drops the folios an I/O brought in once it
 * completes. A file or kernel that answers EOPNOTSUPP switches this policy to {@link EvictPolicy} for good.
 */
final class DontcachePolicy implements CachePolicy {
    private final RawFile file;
    private volatile EvictPolicy fallback;

    DontcachePolicy(RawFile file) throws IOException {
        this.file = file;
        probe();
    }

    /** One byte read with RWF_DONTCACHE tells whether this file supports it; an empty file is probed on first I/O. */
    private void probe() throws IOException {
        if (file.size() == 0) return;
        ByteBuffer one = ByteBuffer.allocateDirect(1);
        try {
            file.read(one, 0, RawFile.DONTCACHE);
        } catch (NativeIOException e) {
            if (!fallBackOn(e)) throw e;
        }
    }

    private boolean fallBackOn(NativeIOException e) throws IOException {
        if (e.errno() != Errno.EOPNOTSUPP) return false;
        synchronized (this) {
            if (fallback == null) fallback = new EvictPolicy(file);
        }
        return true;
    }

    @Override
    public CacheMode mode() {
        return fallback == null ? CacheMode.DONTCACHE : CacheMode.EVICT;
    }

    @Override public RawFile file() { return file; }

    @Override
    public int read(ByteBuffer dst, long offset) throws IOException {
        EvictPolicy evict = fallback;
        if (evict != null) return evict.read(dst, offset);
        int start = dst.position();
        try {
            return file.read(dst, offset, RawFile.DONTCACHE);
        } catch (NativeIOException e) {
            if (!fallBackOn(e)) throw e;
            dst.position(start);
            return fallback.read(dst, offset);
        }
    }

    @Override
    public void write(ByteBuffer src, long offset, boolean fua) throws IOException {
        EvictPolicy evict = fallback;
        if (evict != null) {
            evict.write(src, offset, fua);
            return;
        }
        int start = src.position();
        try {
            file.write(src, offset, RawFile.DONTCACHE | (fua ? RawFile.DSYNC : 0));
        } catch (NativeIOException e) {
            if (!fallBackOn(e)) throw e;
            src.position(start);
            fallback.write(src, offset, fua);
        }
    }

    @Override
    public void flush() throws IOException {
        file.dataSync();
    }

    /** Prefetching would fill the cache this mode keeps empty, so it does nothing. */
    @Override
    public void prefetch(long offset, long length) throws IOException {
        EvictPolicy evict = fallback;
        if (evict != null) evict.prefetch(offset, length);
    }

    @Override
    public void close() throws IOException {
        EvictPolicy evict = fallback;
        if (evict != null) evict.close();
    }
}

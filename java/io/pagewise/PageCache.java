package io.pagewise;

import io.pagewise.internal.Advice;
import io.pagewise.internal.FileKinds;
import io.pagewise.internal.IoVector;
import io.pagewise.internal.Mincore;
import io.pagewise.internal.NativeRawFile;
import io.pagewise.internal.RawFile;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;

/**
 * Page-cache facts and actions for whole files: residency (cachestat, or mincore before Linux 6.5), eviction, and
 * loading. Needs the native library.
 */
public final class PageCache {
    private static final int TOUCH_CHUNK = 1 << 20;

    private PageCache() {}

    /**
     * {@return the system page size in bytes}
     *
     * @throws UnsupportedOperationException when the native library is not loaded
     */
    public static int pageSize() {
        Native.require("PageCache");
        return Mincore.pageSize();
    }

    /**
     * {@return how much of a file is in the page cache}
     *
     * @param path the file
     * @throws IOException when the file cannot be opened or mapped
     * @throws UnsupportedOperationException when the native library is not loaded
     */
    public static Residency residency(Path path) throws IOException {
        return residency(path, 0, Long.MAX_VALUE);
    }

    /**
     * {@return how much of [offset, offset + length) of a file (clipped to its size) is in the page cache}
     *
     * @param path   the file
     * @param offset the start of the range
     * @param length the length of the range
     * @throws IOException when the file cannot be opened or mapped
     * @throws IllegalArgumentException when offset or length is negative
     * @throws UnsupportedOperationException when the native library is not loaded
     */
    public static Residency residency(Path path, long offset, long length) throws IOException {
        if (offset < 0) throw new IllegalArgumentException("offset " + offset + " is negative");
        if (length < 0) throw new IllegalArgumentException("length " + length + " is negative");
        try (RawFile file = open(path)) {
            return residency(file, offset, length);
        }
    }

    static Residency residency(RawFile file, long offset, long length) throws IOException {
        int page = Mincore.pageSize();
        long end = Math.min(file.size(), length > Long.MAX_VALUE - offset ? Long.MAX_VALUE : offset + length);
        if (end <= offset) return new Residency(0, 0, page); // empty once clipped, even inside the last page
        long start = offset - offset % page;
        long total = (end - start + page - 1) / page;
        return new Residency(file.residentPages(start, end - start), total, page);
    }

    /**
     * {@return the page-cache state of a whole file from one cachestat(2): cached, dirty, under writeback, evicted
     * and recently evicted pages}, or empty where the kernel has no cachestat (before Linux 6.5) or does not tell for
     * this file; {@link #residency(Path)} then still counts the cached pages
     *
     * @param path the file or block device
     * @throws IOException when the file cannot be opened
     * @throws UnsupportedOperationException when the native library is not loaded
     */
    public static java.util.Optional<CacheState> cacheState(Path path) throws IOException {
        try (NativeRawFile file = open(path)) {
            long[] state = file.cacheStat();
            return state == null ? java.util.Optional.empty() : java.util.Optional.of(
                    new CacheState(state[0], state[1], state[2], state[3], state[4], Mincore.pageSize()));
        }
    }

    /**
     * Writes back dirty pages of a file, then drops all its pages from the cache (others' mappings keep theirs).
     *
     * @param path the file
     * @throws IOException when the file cannot be opened or written back
     * @throws UnsupportedOperationException when the native library is not loaded
     */
    public static void evict(Path path) throws IOException {
        try (RawFile file = open(path)) {
            file.syncRange(0, 0, Advice.SYNC_WAIT_BEFORE | Advice.SYNC_WRITE | Advice.SYNC_WAIT_AFTER);
            file.advise(0, 0, Advice.DONTNEED);
        }
    }

    /**
     * Reads a whole file so that it is in the page cache, like {@code vmtouch -t}.
     *
     * @param path the file
     * @throws IOException when the file cannot be opened or read
     * @throws UnsupportedOperationException when the native library is not loaded
     */
    public static void touch(Path path) throws IOException {
        try (RawFile file = open(path)) {
            ByteBuffer buffer = ByteBuffer.allocateDirect(TOUCH_CHUNK);
            long size = file.size();
            for (long at = 0; at < size; at += TOUCH_CHUNK) {
                if (file.read(IoVector.of(buffer.clear(), at), 0) < buffer.capacity()) break;
            }
        }
    }

    private static NativeRawFile open(Path path) throws IOException {
        Native.require("PageCache");
        FileKinds.requireFileOrDevice(path);
        return NativeRawFile.open(path, 0);
    }
}

package io.pagewise.internal;

import java.io.IOException;
import java.nio.file.Path;

/**
 * The system calls a cache policy is built from, without policy. Two implementations: {@link NativeRawFile}
 * (JNI, every knob) and {@link ChannelRawFile} (FileChannel, where the native library cannot load).
 * A read or write takes a whole, checked request ({@link IoVector}) with per-call flags; it moves every buffer's
 * position by the bytes transferred to or from it.
 */
public interface RawFile extends java.io.Closeable {
    /** Per-call flag: RWF_DONTCACHE. */
    int DONTCACHE = PositionalIo.DONTCACHE;
    /** Per-call flag: RWF_DSYNC, durable before return. */
    int DSYNC = PositionalIo.DSYNC;
    /** Per-call flag: a short read means end of file (O_DIRECT cannot continue at an unaligned offset). */
    int SHORT_IS_EOF = PositionalIo.SHORT_IS_EOF;
    /** Per-call flag for writes: submit through Linux AIO and wait (see {@link PositionalIo#AIO}); a hint elsewhere. */
    int AIO = PositionalIo.AIO;

    /** Readahead assumed where the device's is unknown: 8 MiB, as on this project's test machines. */
    long DEFAULT_READAHEAD = 8L << 20;

    Path path();

    /**
     * {@return what tells this file apart from every other open one (device and inode), or null when the file system
     * gives nothing}: two descriptors of one file have equal identities, whatever the paths they were opened by
     */
    default Object identity() {
        return fileKey(path());
    }

    /** {@return the file key (device and inode) of what path leads to, or null when there is none to be had} */
    static Object fileKey(Path path) {
        try {
            return java.nio.file.Files.readAttributes(path, java.nio.file.attribute.BasicFileAttributes.class).fileKey();
        } catch (IOException | SecurityException e) {
            return null;
        }
    }

    /** How far the kernel may read ahead of a reader on this file's device, in bytes. */
    long readaheadBytes();

    /** {@return the file descriptor, for a ring to read and write it; -1 where there is none (the pure-Java path)} */
    default int descriptor() {
        return -1;
    }

    boolean isNative();

    /**
     * Reads the request's bytes into its buffers, moving their positions by the bytes each took.
     *
     * @return bytes read; fewer than requested only at end of file (or at a short read, with SHORT_IS_EOF)
     */
    long read(IoVector request, int flags) throws IOException;

    /** Writes every byte of the request, moving its buffers' positions to their limits. */
    void write(IoVector request, int flags) throws IOException;

    void dataSync() throws IOException;

    /** What this file asked of the kernel: RWF_DONTCACHE reads, RWF_DSYNC writes, syncs. */
    IoCounters counters();

    /** posix_fadvise with an {@link Advice} code; length 0 = to end of file. */
    void advise(long offset, long length, int advice) throws IOException;

    /** sync_file_range with {@link Advice} SYNC_* flags. */
    void syncRange(long offset, long length, int flags) throws IOException;

    long size() throws IOException;

    void truncate(long size) throws IOException;

    /** fallocate with a {@link Space} mode; false when the file or filesystem cannot. */
    boolean fallocate(int mode, long offset, long length) throws IOException;

    /** SEEK_DATA / SEEK_HOLE; -1 when there is no more data (or hole) after offset. */
    long seek(long offset, int whence) throws IOException;

    /** Page-cache residency bitmap of a range (bit i = page i); null when it cannot be read. */
    byte[] residentBitmap(long offset, long length) throws IOException;

    /**
     * Cached pages of [offset, offset + length) counted in one call (cachestat, Linux 6.5+), or -1 where that cannot
     * be asked (older kernels, the pure-Java path): then only {@link #residentBitmap} tells.
     */
    long cachedPages(long offset, long length) throws IOException;

    /** Resident pages of [offset, offset + length), offset page aligned: cachestat where it answers, else mincore. */
    long residentPages(long offset, long length) throws IOException;

    boolean isBlockDevice();

    /** True for regular files and block devices; false for character devices, pipes and sockets. */
    boolean usesPageCache();

    io.pagewise.system.Alignment alignment();

    void close() throws IOException;
}

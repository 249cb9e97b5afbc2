package io.pagewise;

import io.pagewise.internal.Advice;
import io.pagewise.internal.AsyncIo;
import io.pagewise.internal.ChannelRawFile;
import io.pagewise.internal.Errno;
import io.pagewise.internal.FileKinds;
import io.pagewise.internal.IoCounters;
import io.pagewise.internal.IoVector;
import io.pagewise.internal.NativeRawFile;
import io.pagewise.internal.OpenOptions;
import io.pagewise.internal.RawFile;
import io.pagewise.internal.UseGate;
import io.pagewise.internal.VirtualThreads;
import io.pagewise.policy.CachePolicy;
import io.pagewise.policy.RingRoute;
import io.pagewise.system.Alignment;
import io.pagewise.system.NativeIOException;
import io.pagewise.system.SystemCallFailure;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.Channel;
import java.nio.channels.ClosedChannelException;
import java.nio.file.AccessDeniedException;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.LongAdder;

/**
 * A file or block device opened for positional I/O under a {@link CacheMode}.
 *
 * <pre>{@code
 * try (StorageFile file = StorageFile.open(path, CacheMode.EVICT, READ, WRITE)) {
 *     file.write(buffer, 4096);          // whole buffer, at offset 4096; buffer.position() == buffer.limit() after
 *     int n = file.read(other, 0);       // fills other, short only at end of file; -1 at or past it
 *     file.readFully(third, 8192);       // fills third or throws EOFException
 *     file.write(new ByteBuffer[] {header, body}, 16384, true); // one request, durable by itself (FUA)
 *     file.flush();                      // fdatasync
 * }
 * }</pre>
 *
 * <p>It keeps {@link java.nio.channels.FileChannel}'s conventions for positional I/O: {@link #read} and
 * {@link #write} move the buffer's position by the bytes transferred (its limit stays), and {@link #read} returns
 * -1 when offset is at or past the end of the file, so a read loop written for FileChannel ends here too. Unlike
 * FileChannel's, a read is short only at the end of the file, and a write always writes the whole buffer.
 * Failed system calls throw the JDK's exception types where it has one (NoSuchFileException,
 * AccessDeniedException, FileAlreadyExistsException), else {@link NativeIOException}; each carries the errno
 * ({@link SystemCallFailure}). On the pure-Java path opening fails with the same exceptions; later failures there
 * are FileChannel's. As FileChannel does, a buffer over an {@code Arena}'s memory (JDK 22+) that is closed, or
 * confined to another thread, is refused with {@link IllegalStateException} or {@code WrongThreadException}; closing
 * a shared arena while a call uses its memory is the caller's to avoid.
 *
 * <p>Thread-safe: any number of threads may read and write at once. A {@link Channel}: {@link #close()} waits for
 * I/O in progress, finishes pending evictions and closes the descriptor; I/O after close fails with
 * {@link ClosedChannelException}, never on a reused descriptor.
 *
 * <p>Interrupts do nothing to the file, on the native and the pure-Java path alike. Unlike a FileChannel, which an
 * interrupt closes for every thread, this is not an {@link java.nio.channels.InterruptibleChannel}: a call made by
 * an interrupted thread, or by one interrupted during the call, completes (or fails) as it would have, and the
 * thread's interrupt status is still set when it returns; other threads' calls go on, and the file stays open until
 * {@link #close()}. A thread that must stop at an interrupt checks its status between calls.
 */
public final class StorageFile implements Channel {
    private final Path path;
    private final RawFile file;
    private final CachePolicy policy;
    private final CacheMode requested;
    private final boolean writable;
    private final UseGate users;
    private final FileSpace space;
    private final LongAdder reads = new LongAdder();
    private final LongAdder bytesRead = new LongAdder();
    private final LongAdder writes = new LongAdder();
    private final LongAdder bytesWritten = new LongAdder();
    private final LongAdder flushes = new LongAdder();
    private final LongAdder zeroes = new LongAdder();
    private final LongAdder bytesZeroed = new LongAdder();
    private final LongAdder trims = new LongAdder();
    private final LongAdder bytesTrimmed = new LongAdder();

    private StorageFile(Path path, RawFile file, CachePolicy policy, CacheMode requested, boolean writable) {
        this.path = path;
        this.file = file;
        this.policy = policy;
        this.requested = requested;
        this.writable = writable;
        this.users = new UseGate(path.toString());
        this.space = new FileSpace(file, policy);
    }

    /**
     * Opens a file or block device with {@link CacheMode#WRITEBACK}, as {@link #open(Path, CacheMode, OpenOption...)}.
     *
     * @param path    the file or block device
     * @param options how to open it; read-only when none is given
     * @return the open file
     * @throws IOException when the file cannot be opened, of the types {@link #open(Path, CacheMode, OpenOption...)}
     *         names
     */
    public static StorageFile open(Path path, OpenOption... options) throws IOException {
        return open(path, CacheMode.WRITEBACK, options);
    }

    /**
     * Opens a file or block device. Options: {@link StandardOpenOption#READ} (the default), {@code WRITE},
     * {@code CREATE}, {@code CREATE_NEW}, {@code TRUNCATE_EXISTING}; {@code SPARSE} is accepted and ignored.
     *
     * @param path    the file or block device
     * @param mode    how the file uses the page cache
     * @param options how to open it; read-only when none is given
     * @return the open file
     * @throws java.nio.file.NoSuchFileException when the file does not exist and no CREATE option says to make it
     * @throws java.nio.file.AccessDeniedException when the system refuses access (EACCES or EPERM)
     * @throws java.nio.file.FileAlreadyExistsException when CREATE_NEW is given and the file exists
     * @throws NativeIOException when path is a directory (EISDIR), a pipe (FIFO, ESPIPE) or a socket (ENXIO),
     *         named as {@code open PATH: is a pipe (FIFO), ... (ESPIPE)}; a directory is refused read-only too
     * @throws IOException when the file cannot be opened otherwise ({@link NativeIOException})
     * @throws IllegalArgumentException for an option not listed above, or CREATE, CREATE_NEW or TRUNCATE_EXISTING
     *         without WRITE
     * @throws UnsupportedOperationException when the mode needs the native library and it is not loaded
     */
    public static StorageFile open(Path path, CacheMode mode, OpenOption... options) throws IOException {
        if (path != null) FileKinds.requireFileOrDevice(path);
        return openAnyKind(path, mode, options);
    }

    /**
     * {@link #open(Path, CacheMode, OpenOption...)} without refusing pipes: for tests, where a positional write to a
     * pipe opened for reading and writing (which does not block) fails with ESPIPE before the kernel looks at the
     * call's flags, so the failure names the call as it was made.
     */
    static StorageFile openAnyKind(Path path, CacheMode mode, OpenOption... options) throws IOException {
        if (path == null || mode == null) throw new NullPointerException(path == null ? "path" : "mode");
        Set<StandardOpenOption> set = OpenOptions.parse(options);
        boolean writable = set.contains(StandardOpenOption.WRITE);
        RawFile file;
        if (Native.isAvailable()) {
            file = NativeRawFile.open(path, OpenOptions.nativeFlags(set) | CachePolicy.openFlags(mode));
        } else {
            if (mode.needsNative()) Native.require("CacheMode." + mode);
            set.remove(StandardOpenOption.SPARSE);
            set.add(StandardOpenOption.READ); // as on the native path, a writable file is readable too
            file = ChannelRawFile.open(path, set);
        }
        try {
            return new StorageFile(path, file, CachePolicy.create(mode, file), mode, writable);
        } catch (IOException | RuntimeException e) {
            file.close();
            throw e;
        }
    }

    /** {@return the path the file was opened with} */
    public Path path() { return path; }

    /** {@return the mode asked for at open} */
    public CacheMode requestedMode() { return requested; }

    /**
     * {@return the mode in effect}: it differs from {@link #requestedMode()} when DONTCACHE fell back to EVICT, at open
     * where the file system is known not to take RWF_DONTCACHE, or later, from the first request the kernel refuses
     * it for (EOPNOTSUPP), so it can change once while the file is open
     */
    public CacheMode cacheMode() { return policy.mode(); }

    /** {@return true when the file was opened with WRITE} */
    public boolean isWritable() { return writable; }

    /** {@return true when the file is a block device} */
    public boolean isBlockDevice() { return file.isBlockDevice(); }

    /** {@return true when I/O goes through the native library, false on the pure-Java path} */
    public boolean isNative() { return file.isNative(); }

    /** {@return the alignment O_DIRECT needs on this file, and its logical block size} */
    public Alignment alignment() { return file.alignment(); }

    /**
     * {@return the alignment in bytes of the offsets and lengths this file serves without bounce buffers}: where
     * the mode {@linkplain CacheMode#isDirect() is direct}, the O_DIRECT alignment (at least 512), else 1
     */
    public int requestAlignment() { return policy.requestAlignment(); }

    /**
     * Reads up to {@code dst.remaining()} bytes at offset into dst and moves its position past them, as
     * {@link java.nio.channels.FileChannel#read(ByteBuffer, long)} does, except that the read is short only at the
     * end of the file.
     *
     * @param dst    the buffer to fill
     * @param offset where in the file to read from
     * @return the bytes read: all of {@code dst.remaining()} unless the file ends first; -1 when offset is at or past
     *         the end of the file (and dst has room), 0 only when dst has no room
     * @throws IOException when the system call fails ({@link NativeIOException}), or
     *         {@link ClosedChannelException} when the file is closed
     * @throws IllegalArgumentException when offset or length is negative or their sum overflows
     * @throws IllegalArgumentException when dst is read-only
     */
    public int read(ByteBuffer dst, long offset) throws IOException {
        if (VirtualThreads.current()) return awaitParked(readAsync(dst, offset));
        // The thread's own request, not a new one (see IoVector), and read(IoVector)'s body written out: with one
        // level more the JIT does not reach the bottom of the FFM binding, and the buffer's segment was allocated
        // per call (32 bytes, on JDK 25).
        IoVector request = IoVector.toReadOnThread(dst, offset);
        try {
            users.enter();
            try {
                long n = policy.read(request);
                reads.increment();
                bytesRead.add(n);
                return n == 0 && request.length() > 0 ? -1 : (int) n;
            } finally {
                users.exit();
            }
        } finally {
            request.release();
        }
    }

    /**
     * Reads at position into the remaining bytes of dsts, filling them in order, as one request: one call of the
     * cache mode's policy and, where the buffers allow (direct, and aligned under O_DIRECT), one preadv or preadv2.
     * Each buffer's position moves by the bytes read into it, as
     * {@link java.nio.channels.FileChannel#read(ByteBuffer[])} moves them, except that the read is short only at the
     * end of the file.
     *
     * @param dsts     the buffers to fill, in order
     * @param position where in the file to read from
     * @return the bytes read: all the buffers' remaining bytes unless the file ends first; -1 when position is at or
     *         past the end of the file (and the buffers have room), 0 only when they have no room
     * @throws IOException when the system call fails ({@link NativeIOException}), or
     *         {@link ClosedChannelException} when the file is closed
     * @throws IllegalArgumentException when position is negative, the total length overflows, or a buffer is
     *         read-only
     */
    public long read(ByteBuffer[] dsts, long position) throws IOException {
        return read(IoVector.toRead(dsts, position));
    }

    /** Every read, checked once where its request was made. */
    private long read(IoVector request) throws IOException {
        users.enter();
        try {
            long n = policy.read(request);
            reads.increment();
            bytesRead.add(n);
            return n == 0 && request.length() > 0 ? -1 : n;
        } finally {
            users.exit();
        }
    }

    /**
     * Reads exactly {@code dst.remaining()} bytes at offset into dst and moves its position past them.
     *
     * @param dst    the buffer to fill
     * @param offset where in the file to read from
     * @throws EOFException when the file ends before dst is full; dst then holds the bytes up to the end, and its
     *         position has moved past them
     * @throws IOException when the system call fails ({@link NativeIOException}), or
     *         {@link ClosedChannelException} when the file is closed
     * @throws IllegalArgumentException when offset or length is negative or their sum overflows
     * @throws IllegalArgumentException when dst is read-only
     */
    public void readFully(ByteBuffer dst, long offset) throws IOException {
        readFully(new ByteBuffer[] {dst}, offset);
    }

    /**
     * Reads exactly the remaining bytes of dsts at position, filling them in order, as one request (see
     * {@link #read(ByteBuffer[], long)}), and moves each buffer's position to its limit.
     *
     * @param dsts     the buffers to fill, in order
     * @param position where in the file to read from
     * @throws EOFException when the file ends before the buffers are full; they then hold the bytes up to the end,
     *         and their positions have moved past them
     * @throws IOException when the system call fails ({@link NativeIOException}), or
     *         {@link ClosedChannelException} when the file is closed
     * @throws IllegalArgumentException when position is negative, the total length overflows, or a buffer is
     *         read-only
     */
    public void readFully(ByteBuffer[] dsts, long position) throws IOException {
        IoVector request = IoVector.toRead(dsts, position);
        long wanted = request.length();
        long n = Math.max(0, read(request));
        if (n < wanted) {
            throw new EOFException(path + " ends at " + (position + n) + ", inside the read at " + position + " (+"
                    + wanted + ")");
        }
    }

    /**
     * Writes all of {@code src.remaining()} at offset and moves its position to its limit, extending the file when
     * the range ends past it.
     *
     * @param src    the bytes to write
     * @param offset where in the file to write them
     * @return the bytes written: all of {@code src.remaining()}, so that {@code pos += write(buffer, pos)} works as
     *         with {@link java.nio.channels.FileChannel#write(ByteBuffer, long)}
     * @throws IOException when the system call fails ({@link NativeIOException}), or
     *         {@link ClosedChannelException} when the file is closed
     * @throws IllegalArgumentException when offset or length is negative or their sum overflows
     * @throws java.nio.file.AccessDeniedException when the file is open read-only
     */
    public int write(ByteBuffer src, long offset) throws IOException {
        return write(src, offset, false);
    }

    /**
     * Writes all of {@code src.remaining()} at offset and moves its position to its limit, as {@link #write(ByteBuffer,
     * long)} does.
     *
     * @param src    the bytes to write
     * @param offset where in the file to write them
     * @param fua    when true the data is on stable storage when this returns (force unit access)
     * @return the bytes written: all of {@code src.remaining()}
     * @throws IOException when the system call fails ({@link NativeIOException}), or
     *         {@link ClosedChannelException} when the file is closed
     * @throws IllegalArgumentException when offset or length is negative or their sum overflows
     * @throws java.nio.file.AccessDeniedException when the file is open read-only
     */
    public int write(ByteBuffer src, long offset, boolean fua) throws IOException {
        if (VirtualThreads.current()) return awaitParked(writeAsync(src, offset, fua));
        // As in read(ByteBuffer, long): the thread's own request, and write(IoVector, boolean)'s body written out.
        IoVector request = IoVector.toWriteOnThread(src, offset);
        try {
            checkWritable("write");
            users.enter();
            try {
                policy.write(request, fua);
                writes.increment();
                bytesWritten.add(request.length());
                return (int) request.length();
            } finally {
                users.exit();
            }
        } finally {
            request.release();
        }
    }

    /**
     * Writes all remaining bytes of srcs, in order, at position, as {@link #write(ByteBuffer[], long, boolean)}
     * without FUA.
     *
     * @param srcs     the bytes to write, in order
     * @param position where in the file to write them
     * @return the bytes written: all of them
     * @throws IOException when the system call fails ({@link NativeIOException}), or
     *         {@link ClosedChannelException} when the file is closed
     * @throws IllegalArgumentException when position is negative or the end of the write overflows
     * @throws java.nio.file.AccessDeniedException when the file is open read-only
     */
    public long write(ByteBuffer[] srcs, long position) throws IOException {
        return write(srcs, position, false);
    }

    /**
     * Writes all remaining bytes of srcs, in order, at position, as one request: one call of the cache mode's policy
     * and, where the buffers allow (direct, and aligned under O_DIRECT), one pwritev or pwritev2. Each buffer's
     * position moves to its limit. With fua the write is durable by itself when this returns ({@code RWF_DSYNC}, or
     * O_DSYNC in DIRECTSYNC); no other data of the file is synced.
     *
     * @param srcs     the bytes to write, in order
     * @param position where in the file to write them
     * @param fua      when true the data is on stable storage when this returns (force unit access)
     * @return the bytes written: all of them
     * @throws IOException when the system call fails ({@link NativeIOException}), or
     *         {@link ClosedChannelException} when the file is closed
     * @throws IllegalArgumentException when position is negative or the end of the write overflows
     * @throws java.nio.file.AccessDeniedException when the file is open read-only
     */
    public long write(ByteBuffer[] srcs, long position, boolean fua) throws IOException {
        return write(IoVector.toWrite(srcs, position), fua);
    }

    /** Every write, checked once where its request was made. */
    private long write(IoVector request, boolean fua) throws IOException {
        checkWritable("write");
        users.enter();
        try {
            policy.write(request, fua);
            writes.increment();
            bytesWritten.add(request.length());
            return request.length();
        } finally {
            users.exit();
        }
    }

    /**
     * Makes every completed write durable where the mode {@linkplain CacheMode#flushSyncs() syncs on flush}
     * (fdatasync); under UNSAFE it does nothing.
     *
     * @throws IOException when the system call fails ({@link NativeIOException}), or
     *         {@link ClosedChannelException} when the file is closed
     */
    public void flush() throws IOException {
        users.enter();
        try {
            policy.flush();
            flushes.increment();
        } finally {
            users.exit();
        }
    }

    /**
     * Applies a whole-file hint (NORMAL, SEQUENTIAL, RANDOM, NOREUSE) or a range hint to the whole file.
     *
     * @param hint the advice
     * @throws IOException when the system call fails ({@link NativeIOException}), or
     *         {@link ClosedChannelException} when the file is closed
     */
    public void advise(AccessHint hint) throws IOException {
        adviseRange(0, 0, hint.nativeCode()); // 0: to the end of the file, as posix_fadvise reads it
    }

    /**
     * Applies a hint to [offset, offset + length). A length of 0 is an empty range, as everywhere in this class:
     * nothing is advised ({@link #advise(AccessHint)} covers the whole file).
     *
     * @param offset the start of the range
     * @param length the length of the range
     * @param hint   the advice
     * @throws IOException when the system call fails ({@link NativeIOException}), or
     *         {@link ClosedChannelException} when the file is closed
     * @throws IllegalArgumentException when offset or length is negative or their sum overflows
     */
    public void advise(long offset, long length, AccessHint hint) throws IOException {
        checkRange(offset, length);
        if (length > 0) adviseRange(offset, length, hint.nativeCode()); else users.checkOpen();
    }

    private void adviseRange(long offset, long length, int advice) throws IOException {
        users.enter();
        try {
            file.advise(offset, length, advice);
        } finally {
            users.exit();
        }
    }

    /**
     * Whether {@link #prefetch} reads anything into the page cache: where the mode in effect
     * {@linkplain CacheMode#prefetches() prefetches}, and not on the pure-Java path.
     *
     * @return true when {@link #prefetch} fills the page cache
     */
    public boolean canPrefetch() { return policy.prefetches(); }

    /**
     * Starts reading a range into the page cache (NBD CACHE), all of it: the kernel reads at most its readahead size
     * per WILLNEED, so the range is advised in pieces of that size. Returns when the reads are queued, not done;
     * does nothing where {@link #canPrefetch} is false.
     *
     * @param offset the start of the range
     * @param length the length of the range
     * @throws IOException when the system call fails ({@link NativeIOException}), or
     *         {@link ClosedChannelException} when the file is closed
     * @throws IllegalArgumentException when offset or length is negative or their sum overflows
     */
    public void prefetch(long offset, long length) throws IOException {
        checkRange(offset, length);
        users.enter();
        try {
            // Past the end there is nothing to read: a CACHE of a whole sparse 16 TiB export is not millions of calls.
            long inFile = Math.min(length, Math.max(0, file.size() - offset));
            if (inFile > 0 && policy.prefetches()) policy.prefetch(offset, inFile);
        } finally {
            users.exit();
        }
    }

    /**
     * Drops the whole file from the page cache, writing dirty pages back first.
     *
     * @throws IOException when the system call fails ({@link NativeIOException}), or
     *         {@link ClosedChannelException} when the file is closed
     */
    public void evict() throws IOException {
        evictRange(0, 0); // 0: to the end of the file, as sync_file_range and posix_fadvise read it
    }

    /**
     * Drops a range from the page cache, writing dirty pages back first. Large folios that straddle the range's
     * edges may stay; {@link #evict()} drops the whole file. A length of 0 is an empty range: nothing is dropped.
     *
     * @param offset the start of the range
     * @param length the length of the range
     * @throws IOException when the system call fails ({@link NativeIOException}), or
     *         {@link ClosedChannelException} when the file is closed
     * @throws IllegalArgumentException when offset or length is negative or their sum overflows
     */
    public void evict(long offset, long length) throws IOException {
        checkRange(offset, length);
        if (length > 0) evictRange(offset, length); else users.checkOpen();
    }

    private void evictRange(long offset, long length) throws IOException {
        users.enter();
        try {
            file.syncRange(offset, length, Advice.SYNC_WAIT_BEFORE | Advice.SYNC_WRITE | Advice.SYNC_WAIT_AFTER);
            file.advise(offset, length, Advice.DONTNEED);
        } finally {
            users.exit();
        }
    }

    /**
     * Makes a range read as zeros. With mayTrim the space may be released (a hole); without it the blocks stay
     * allocated. Falls back to writing zeros where the filesystem cannot do either, and on a block device writes
     * them into the partial logical blocks at the edges of the range (the device zeroes whole blocks only). In the modes that
     * {@linkplain CacheMode#syncsEveryWrite() sync every write} the zeros are durable when this returns.
     *
     * @param offset  the start of the range
     * @param length  the length of the range
     * @param mayTrim whether the range may become a hole
     * @throws IOException when the system call fails ({@link NativeIOException}), or
     *         {@link ClosedChannelException} when the file is closed
     * @throws IllegalArgumentException when offset or length is negative or their sum overflows
     * @throws java.nio.file.AccessDeniedException when the file is open read-only
     */
    public void zero(long offset, long length, boolean mayTrim) throws IOException {
        checkRange(offset, length);
        checkWritable("zero");
        users.enter();
        try {
            if (length == 0) return;
            space.zero(offset, length, mayTrim);
            zeroes.increment();
            bytesZeroed.add(length);
        } finally {
            users.exit();
        }
    }

    /**
     * Allocates disk space for a range (fallocate), extending the file's size where the range passes its end; the
     * range's new blocks read as zeros and its data stays. Writing into allocated space needs no allocation then: an
     * O_DIRECT write there can go out without waiting for the filesystem (on io_uring, without a kernel worker
     * thread), where one that extends the file cannot. Cut the size back ({@link #resize}) to what was written.
     *
     * @param offset the start of the range
     * @param length the length of the range
     * @return false, with nothing changed, where the file or filesystem cannot allocate (a block device, a
     *         filesystem without fallocate, the pure-Java path)
     * @throws IOException when the system call fails ({@link NativeIOException}; ENOSPC when the space is not
     *         there), or {@link ClosedChannelException} when the file is closed
     * @throws IllegalArgumentException when offset or length is negative or their sum overflows
     * @throws java.nio.file.AccessDeniedException when the file is open read-only
     */
    public boolean allocate(long offset, long length) throws IOException {
        checkRange(offset, length);
        checkWritable("allocate");
        users.enter();
        try {
            return length > 0 && space.allocate(offset, length);
        } finally {
            users.exit();
        }
    }

    /**
     * Releases the space of a range (punches a hole), which then reads as zeros. Where holes cannot be punched (some
     * filesystems and devices, the pure-Java path) it does nothing and the range keeps its data: like NBD TRIM it
     * promises nothing about later reads. Use {@link #zero} to get zeros. A block device discards whole logical
     * blocks only: the partial ones at the edges of the range keep their data. In the modes that
     * {@linkplain CacheMode#syncsEveryWrite() sync every write} the hole is durable when this returns.
     *
     * @param offset the start of the range
     * @param length the length of the range
     * @throws IOException when the system call fails ({@link NativeIOException}), or
     *         {@link ClosedChannelException} when the file is closed
     * @throws IllegalArgumentException when offset or length is negative or their sum overflows
     * @throws java.nio.file.AccessDeniedException when the file is open read-only
     */
    public void trim(long offset, long length) throws IOException {
        checkRange(offset, length);
        checkWritable("trim");
        users.enter();
        try {
            if (length == 0) return;
            space.trim(offset, length);
            trims.increment();
            bytesTrimmed.add(length);
        } finally {
            users.exit();
        }
    }

    /**
     * The data and hole runs of [offset, offset + length), clipped to the file size, from SEEK_DATA/SEEK_HOLE.
     * Where holes cannot be found (block devices, the pure-Java path) the whole range is one data extent.
     *
     * @param offset the start of the range
     * @param length the length of the range
     * @return the extents in order, covering the clipped range; empty when it is empty
     * @throws IOException when the system call fails ({@link NativeIOException}), or
     *         {@link ClosedChannelException} when the file is closed
     * @throws IllegalArgumentException when offset or length is negative or their sum overflows
     * @see #extents(long, long, int)
     */
    public List<Extent> extents(long offset, long length) throws IOException {
        return extents(offset, length, Integer.MAX_VALUE);
    }

    /**
     * As {@link #extents(long, long)}, but at most maxExtents runs: those that start the range, found with at most
     * two SEEK_DATA/SEEK_HOLE calls each, so the cost follows what is returned rather than the length asked about
     * (a range of alternating 4 KiB runs over 4 GiB is a million of them).
     *
     * @param offset     the start of the range
     * @param length     the length of the range
     * @param maxExtents the most runs to return, at least 1
     * @return the first runs of the clipped range in order, from offset and without gaps; all of it when it has
     *         at most maxExtents runs; empty when it is empty
     * @throws IOException when the system call fails ({@link NativeIOException}), or
     *         {@link ClosedChannelException} when the file is closed
     * @throws IllegalArgumentException when offset or length is negative or their sum overflows, or maxExtents
     *         is less than 1
     */
    public List<Extent> extents(long offset, long length, int maxExtents) throws IOException {
        checkRange(offset, length);
        if (maxExtents < 1) throw new IllegalArgumentException("maxExtents " + maxExtents + " is less than 1");
        users.enter();
        try {
            return space.extents(offset, length, maxExtents);
        } finally {
            users.exit();
        }
    }

    /**
     * A {@link java.nio.channels.SeekableByteChannel} view of this file with a position of its own, starting at 0:
     * {@code Channels.newInputStream(file.channel())} reads the file through its cache mode. Closing the view leaves
     * the file open; closing the file closes every view.
     *
     * @return a new view
     */
    public java.nio.channels.SeekableByteChannel channel() {
        return new StorageFileChannel(this);
    }

    /**
     * {@return the file's size in bytes (a block device's capacity)}
     *
     * @throws IOException when the system call fails ({@link NativeIOException}), or
     *         {@link ClosedChannelException} when the file is closed
     */
    public long size() throws IOException {
        users.enter();
        try {
            return file.size();
        } finally {
            users.exit();
        }
    }

    /**
     * Truncates or extends (sparsely) the file.
     *
     * @param size the new size in bytes
     * @throws IOException when the system call fails ({@link NativeIOException}), or
     *         {@link ClosedChannelException} when the file is closed
     * @throws IllegalArgumentException when size is negative
     * @throws java.nio.file.AccessDeniedException when the file is open read-only
     */
    public void resize(long size) throws IOException {
        if (size < 0) throw new IllegalArgumentException("size " + size + " is negative");
        checkWritable("resize");
        users.enter();
        try {
            policy.resize(size);
        } finally {
            users.exit();
        }
    }

    /**
     * {@return the page-cache residency of [offset, offset + length) of this file, clipped to its size}
     *
     * @param offset the start of the range
     * @param length the length of the range
     * @throws IOException when the system call fails ({@link NativeIOException}), or
     *         {@link ClosedChannelException} when the file is closed
     * @throws IllegalArgumentException when offset or length is negative or their sum overflows
     * @throws UnsupportedOperationException when the native library is not loaded
     */
    public Residency residency(long offset, long length) throws IOException {
        checkRange(offset, length);
        Native.require("residency");
        users.enter();
        try {
            return PageCache.residency(file, offset, length);
        } finally {
            users.exit();
        }
    }

    /** {@return the counts of operations done since the file was opened} */
    public IoStats stats() {
        IoCounters kernel = file.counters();
        return new IoStats(reads.sum(), bytesRead.sum(), writes.sum(), bytesWritten.sum(), flushes.sum(),
                zeroes.sum(), bytesZeroed.sum(), trims.sum(), bytesTrimmed.sum(), kernel.dontcacheReads(),
                kernel.dontcacheBytesRead(), kernel.dsyncWrites(), kernel.dsyncBytesWritten(), kernel.syncs());
    }

    /** {@return false once {@link #close()} has begun} */
    @Override
    public boolean isOpen() {
        return users.isOpen();
    }

    /**
     * Reads up to {@code dst.remaining()} bytes at offset into dst without waiting for them, as
     * {@link java.nio.channels.AsynchronousFileChannel#read(ByteBuffer, long)} does: the future completes with the
     * bytes read (all of them unless the file ends first), or -1 when offset is at or past the end of the file, and
     * dst's position then moves past them. It fails with the exception the blocking {@link #read(ByteBuffer, long)}
     * would throw. Where it can, the request goes on the JVM's io_uring ring; else, and for requests the cache mode
     * must make itself, a pool thread makes the blocking call ({@link Native#asyncPath()}). dst must not be touched
     * until the future completes. A platform thread that waits with {@code join()} reaps the ring itself while it waits.
     * Stages chained to the future without an executor may run on the thread that reaped the completion: give long
     * work an executor.
     *
     * @param dst    the buffer to fill
     * @param offset where in the file to read from
     * @return the future of the bytes read
     * @throws IllegalArgumentException when offset is negative or dst is read-only
     */
    public CompletableFuture<Integer> readAsync(ByteBuffer dst, long offset) {
        return transferAsync(List.of(dst), new long[] {offset}, false, false).get(0);
    }

    /**
     * Reads into each buffer at its offset, as {@link #readAsync(ByteBuffer, long)} does for one, submitting them
     * together: on the ring, in one system call.
     *
     * @param dsts    the buffers to fill
     * @param offsets where in the file to read each from
     * @return a future per buffer, in order
     * @throws IllegalArgumentException when the counts differ, an offset is negative or a buffer is read-only
     */
    public List<CompletableFuture<Integer>> readAsync(List<ByteBuffer> dsts, long[] offsets) {
        return transferAsync(dsts, offsets, false, false);
    }

    /**
     * Writes all of {@code src.remaining()} at offset without waiting, as
     * {@link java.nio.channels.AsynchronousFileChannel#write(ByteBuffer, long)} does: the future completes with the
     * bytes written, and src's position moves to its limit. It fails with the exception the blocking
     * {@link #write(ByteBuffer, long)} would throw. See {@link #readAsync(ByteBuffer, long)} for where it runs.
     *
     * @param src    the bytes to write
     * @param offset where in the file to write them
     * @return the future of the bytes written
     * @throws IllegalArgumentException when offset is negative or offset plus length overflows
     */
    public CompletableFuture<Integer> writeAsync(ByteBuffer src, long offset) {
        return transferAsync(List.of(src), new long[] {offset}, true, false).get(0);
    }

    /**
     * {@link #writeAsync(ByteBuffer, long)}, durable when the future completes if fua is true.
     *
     * @param src    the bytes to write
     * @param offset where in the file to write them
     * @param fua    when true the data is on stable storage when the future completes
     * @return the future of the bytes written
     */
    public CompletableFuture<Integer> writeAsync(ByteBuffer src, long offset, boolean fua) {
        return transferAsync(List.of(src), new long[] {offset}, true, fua).get(0);
    }

    /**
     * Writes each buffer at its offset, as {@link #writeAsync(ByteBuffer, long)} does for one, submitting them
     * together: on the ring, in one system call. Writes whose ranges overlap may land in any order.
     *
     * @param srcs    the bytes to write
     * @param offsets where in the file to write each
     * @return a future per buffer, in order
     * @throws IllegalArgumentException when the counts differ, or an offset is negative or overflows with its length
     */
    public List<CompletableFuture<Integer>> writeAsync(List<ByteBuffer> srcs, long[] offsets) {
        return transferAsync(srcs, offsets, true, false);
    }

    private List<CompletableFuture<Integer>> transferAsync(List<ByteBuffer> buffers, long[] offsets, boolean write,
                                                           boolean fua) {
        if (buffers.size() != offsets.length) {
            throw new IllegalArgumentException(buffers.size() + " buffers but " + offsets.length + " offsets");
        }
        for (int i = 0; i < offsets.length; i++) {
            ByteBuffer buffer = Objects.requireNonNull(buffers.get(i), "buffer");
            checkRange(offsets[i], buffer.remaining());
            if (!write && buffer.isReadOnly()) throw new IllegalArgumentException("read into a read-only buffer");
        }
        AsyncIo engine = AsyncIo.shared();
        List<CompletableFuture<Integer>> futures = new ArrayList<>(offsets.length);
        List<AsyncIo.RingOp> ops = new ArrayList<>();
        for (int i = 0; i < offsets.length; i++) {
            ByteBuffer buffer = buffers.get(i);
            long offset = offsets[i];
            AsyncIo.RingFuture<Integer> future = new AsyncIo.RingFuture<>();
            futures.add(future);
            try {
                if (write) checkWritable("write");
                users.enter();
            } catch (IOException e) {
                future.completeExceptionally(e);
                continue;
            }
            RingRoute route = null;
            try {
                if (buffer.remaining() == 0) {
                    users.exit();
                    future.complete(0);
                    continue;
                }
                // A heap buffer goes to the pool, whose blocking call bounces it through the library's buffers.
                if (engine.hasRing() && buffer.isDirect()) {
                    IoVector request = write ? IoVector.toWrite(buffer, offset) : IoVector.toRead(buffer, offset);
                    route = policy.ringRoute(request, write, fua);
                }
            } catch (RuntimeException e) {
                users.exit();
                future.completeExceptionally(e);
                continue;
            }
            if (route == null) {
                users.exit(); // the blocking call holds the file while it runs
                engine.onPool(() -> write ? write(buffer, offset, fua) : read(buffer, offset)).whenComplete((n, e) -> {
                    if (e != null) future.completeExceptionally(e); else future.complete(n);
                });
                continue;
            }
            future.onRing(engine);
            ops.add(ringOp(route, buffer, offset, write, future));
        }
        if (!ops.isEmpty()) engine.submit(ops);
        return futures;
    }

    /**
     * Waits for an asynchronous request as a blocking call waits: not interruptibly, throwing what it threw. A
     * virtual thread parks here and leaves its carrier to others, where a system call would have held it.
     */
    private static int awaitParked(CompletableFuture<Integer> request) throws IOException {
        try {
            return request.join();
        } catch (java.util.concurrent.CompletionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof IOException io) throw io;
            if (cause instanceof RuntimeException runtime) throw runtime;
            if (cause instanceof Error error) throw error;
            throw e;
        }
    }

    /** One request on the ring, of a direct buffer. */
    private AsyncIo.RingOp ringOp(RingRoute route, ByteBuffer buffer, long offset, boolean write,
                                  CompletableFuture<Integer> future) {
        int start = buffer.position();
        int length = buffer.remaining();
        return new AsyncIo.RingOp(route.descriptor(), write, buffer, start, length, offset, route.flags(),
                route.shortIsEof(), new AsyncIo.Completion() {
                    @Override
                    public void completed(long bytes) {
                        try {
                            route.done();
                        } finally {
                            users.exit();
                        }
                        buffer.position(start + (int) bytes);
                        if (write) {
                            writes.increment();
                            bytesWritten.add(bytes);
                        } else {
                            reads.increment();
                            bytesRead.add(bytes);
                        }
                        future.complete(!write && bytes == 0 ? -1 : (int) bytes);
                    }

                    @Override
                    public void failed(int negativeErrno, long from, long left) {
                        try {
                            route.done();
                        } finally {
                            users.exit();
                        }
                        future.completeExceptionally(Errno.exception(negativeErrno,
                                write ? "pwrite by io_uring" : "pread by io_uring", path, from, left));
                    }
                });
    }

    /**
     * Waits for I/O in progress, finishes pending evictions and closes the file. New I/O fails with
     * {@link ClosedChannelException} from the moment close begins. As {@link Channel#close()} asks, a call while
     * another thread is closing the file waits until that close is done, and a call after it does nothing.
     *
     * @throws IOException when the final write-back of pending evictions or the close itself fails
     */
    @Override
    public void close() throws IOException {
        if (!users.beginClose()) return;
        try {
            policy.close();
        } finally {
            try {
                file.close();
            } finally {
                users.closed();
            }
        }
    }

    private void checkWritable(String operation) throws IOException {
        if (writable) return;
        // Use after close says so, whatever the file was opened for.
        users.checkOpen();
        throw new AccessDeniedException(path.toString(), null, operation + ": file is open read-only");
    }

    private static void checkRange(long offset, long length) {
        IoVector.checkRange(offset, length);
    }
}

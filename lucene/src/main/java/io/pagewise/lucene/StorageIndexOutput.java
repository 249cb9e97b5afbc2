package io.pagewise.lucene;

import io.pagewise.CacheMode;
import io.pagewise.IoBuffers;
import io.pagewise.Native;
import io.pagewise.StorageFile;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.zip.CRC32;
import org.apache.lucene.store.IndexOutput;

/**
 * A new file written through a {@link StorageFile} in the mode its policy names, from a direct buffer of
 * {@link #BUFFER_BYTES} aligned to 4 KiB: in EVICT and DONTCACHE a full buffer is a whole-page write that the mode
 * can send past the page cache, and in DIRECT it needs no bounce buffer. The CRC32 Lucene's footers carry is taken
 * over the buffer's bytes once, when they are written or asked for.
 */
final class StorageIndexOutput extends IndexOutput {
    static final int BUFFER_BYTES = 256 << 10;
    /**
     * Full buffers in flight at most, with {@link #asyncWrites}: the writer fills the next while the kernel writes
     * them, and waits only when this many are still being written (1 MiB).
     */
    static final int IN_FLIGHT = 4;
    /** Buffers of closed outputs, for the next: an index writes many small files, and direct memory is freed late. */
    private static final ArrayBlockingQueue<ByteBuffer> SPARE = new ArrayBlockingQueue<>(32);
    private final StorageFile file;
    private final IoTally.Counter counter;
    private ByteBuffer buffer;
    private final CRC32 crc = new CRC32();
    /** The file offset of the buffer's first byte. */
    private long flushed;
    /** How many of the buffer's bytes the CRC already covers. */
    private int summed;
    private boolean closed;
    /**
     * Whether full buffers go out by {@link StorageFile#writeAsync}, on the io_uring ring: in the modes whose
     * whole-page writes bypass the page cache and so wait for the disk (EVICT's large writes and DIRECT go by
     * O_DIRECT), where the ring is there. No thread of ours waits for them: the kernel writes, the ring's reaper
     * completes. A failed write fails the output at its next write or at close.
     */
    private final boolean asyncWrites;
    /** Full buffers being written, oldest first, with their writes. */
    private final ArrayDeque<InFlight> inFlight = new ArrayDeque<>();

    /**
     * How far past its full buffers an output in EVICT or DIRECT allocates the file (8 MiB), where those buffers go
     * by O_DIRECT: ext4 cannot extend a file without waiting, so on io_uring each write that extends it goes to a
     * kernel worker thread, one more thread beside the engine's searches, and a blocking write allocates as it goes;
     * into allocated space both go out at once. Close cuts the file back to what was written.
     */
    static final long ALLOCATE_AHEAD = 8L << 20;
    /** The end of the space allocated so far. */
    private long allocatedEnd;
    /** Whether full buffers allocate ahead: in EVICT and DIRECT, until an allocation is refused or fails. */
    private boolean allocating;

    private record InFlight(ByteBuffer buffer, CompletableFuture<Integer> write) {}

    StorageIndexOutput(String description, String name, StorageFile file, IoTally.Counter counter) {
        this(description, name, file, counter, true);
    }

    StorageIndexOutput(String description, String name, StorageFile file, IoTally.Counter counter, boolean async) {
        super(description, name);
        this.file = file;
        this.counter = counter;
        CacheMode mode = file.cacheMode();
        boolean fullBuffersDirect = mode == CacheMode.EVICT || mode == CacheMode.DIRECT;
        this.asyncWrites = async && fullBuffersDirect && RING;
        this.allocating = fullBuffersDirect && !Boolean.getBoolean("pagewise.lucene.no-allocate-ahead");
        this.buffer = newBuffer();
    }

    /** Whether asynchronous writes run on io_uring in this JVM (else they would take a pool thread each). */
    private static final boolean RING = Native.isAvailable() && Native.asyncPath().equals("io_uring");

    /** In huge pages where the kernel gives them, so that a full buffer's O_DIRECT write is one segment for the disk. */
    private static ByteBuffer newBuffer() {
        ByteBuffer spare = SPARE.poll();
        return spare != null ? spare : IoBuffers.allocate(BUFFER_BYTES).order(ByteOrder.LITTLE_ENDIAN);
    }

    @Override
    public void writeByte(byte b) throws IOException {
        if (!buffer.hasRemaining()) flushBuffer();
        buffer.put(b);
    }

    @Override
    public void writeBytes(byte[] bytes, int offset, int count) throws IOException {
        while (count > 0) {
            if (!buffer.hasRemaining()) flushBuffer();
            int now = Math.min(count, buffer.remaining());
            buffer.put(bytes, offset, now);
            offset += now;
            count -= now;
        }
    }

    // A value that does not fit in the buffer's end goes byte by byte (little-endian, as DataOutput writes it), so
    // that every buffer is written full: one written short would leave every later write off the pages O_DIRECT needs.

    @Override
    public void writeShort(short value) throws IOException {
        if (buffer.remaining() >= Short.BYTES) buffer.putShort(value); else super.writeShort(value);
    }

    @Override
    public void writeInt(int value) throws IOException {
        if (buffer.remaining() >= Integer.BYTES) buffer.putInt(value); else super.writeInt(value);
    }

    @Override
    public void writeLong(long value) throws IOException {
        if (buffer.remaining() >= Long.BYTES) buffer.putLong(value); else super.writeLong(value);
    }

    @Override
    public long getFilePointer() {
        return closed || buffer == null ? flushed : flushed + buffer.position();
    }

    @Override
    public long getChecksum() throws IOException {
        if (!closed) sumBuffered();
        return crc.getValue();
    }

    private void sumBuffered() {
        if (buffer == null) return; // a write failed while the next buffer was awaited
        int end = buffer.position();
        if (summed < end) {
            crc.update(buffer.duplicate().limit(end).position(summed));
            summed = end;
        }
    }

    private void flushBuffer() throws IOException {
        sumBuffered();
        buffer.flip();
        int bytes = buffer.remaining();
        if (allocating && bytes == BUFFER_BYTES && flushed + bytes > allocatedEnd) {
            allocateAhead(flushed + bytes + ALLOCATE_AHEAD);
        }
        if (asyncWrites && bytes == BUFFER_BYTES) {
            throwFailedWrite();
            inFlight.add(new InFlight(buffer, file.writeAsync(buffer, flushed)));
            buffer = null; // it is the write's until that completes
            buffer = inFlight.size() < IN_FLIGHT ? newBuffer() : awaitOldest();
        } else {
            file.write(buffer, flushed);
            buffer.clear();
        }
        counter.written(bytes);
        flushed += bytes;
        summed = 0;
    }

    /**
     * Allocates the file up to end. Where that is refused (no fallocate) or fails (ENOSPC, with room perhaps for the
     * writes themselves), the output stops allocating and its writes extend the file as they come.
     */
    private void allocateAhead(long end) {
        try {
            if (file.allocate(allocatedEnd, end - allocatedEnd)) {
                allocatedEnd = end;
                return;
            }
        } catch (IOException e) {
            // the writes will say whether the space is really not there
        }
        allocating = false;
    }

    /** Throws the failure of a write that has failed already, if any. */
    private void throwFailedWrite() throws IOException {
        for (InFlight write : inFlight) {
            if (write.write().isCompletedExceptionally()) await(write);
        }
    }

    /** Waits for the oldest write; {@return its buffer, to fill again} */
    private ByteBuffer awaitOldest() throws IOException {
        InFlight oldest = inFlight.poll();
        await(oldest);
        return oldest.buffer().clear();
    }

    private static void await(InFlight write) throws IOException {
        try {
            write.write().join();
        } catch (CompletionException e) {
            if (e.getCause() instanceof IOException failure) throw failure;
            throw e;
        }
    }

    @Override
    public void close() throws IOException {
        if (closed) return;
        closed = true;
        IOException failed = null;
        try {
            if (buffer != null && buffer.position() > 0) flushBuffer();
        } catch (IOException e) {
            failed = e;
        }
        // Every write waited for, failed or not: a buffer still being written must not be reused.
        while (!inFlight.isEmpty()) {
            InFlight write = inFlight.poll();
            try {
                await(write);
            } catch (IOException | RuntimeException e) {
                if (failed == null) failed = e instanceof IOException io ? io : new IOException(e);
                else if (e != failed) failed.addSuppressed(e);
            }
            write.buffer().clear();
            SPARE.offer(write.buffer());
        }
        try {
            if (allocatedEnd > flushed) file.resize(flushed); // the space allocated ahead and not written
        } catch (IOException e) {
            if (failed == null) failed = e; else failed.addSuppressed(e);
        }
        try {
            file.close();
        } catch (IOException e) {
            if (failed == null) failed = e; else failed.addSuppressed(e);
        }
        if (buffer != null) SPARE.offer(buffer.clear());
        buffer = null;
        if (failed != null) throw failed;
    }
}

package io.pagewise.lucene;

import io.pagewise.StorageFile;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayDeque;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.zip.CRC32;
import org.apache.lucene.store.IndexOutput;

/**
 * A new file written through a {@link StorageFile} in the mode its policy names, from a direct buffer of
 * {@link #BUFFER_BYTES} aligned to 4 KiB: in EVICT and DONTCACHE a full buffer is a whole-page write that the mode
 * can send past the page cache, and in DIRECT it needs no bounce buffer. The CRC32 Lucene's footers carry is taken
 * over the buffer's bytes once, when they are written or asked for.
 *
 * <p>Where the mode waits for the disk (every mode but WRITEBACK), a full buffer is written by {@link BackgroundIo}
 * while the writer fills the next, up to {@link #BUFFERS} buffers per output; {@link #close} returns when every
 * write is done, and throws the first that failed, as does any write after it.
 */
final class StorageIndexOutput extends IndexOutput {
    static final int BUFFER_BYTES = 256 << 10;
    /**
     * The buffer being filled and up to four being written (1 MiB in flight): with two in flight a merge's stored
     * fields, which it copies as fast as it reads them, still waited for the disk.
     */
    static final int BUFFERS = 5;
    private static final int ALIGNMENT = 4096;
    /** Buffers of closed outputs, for the next: an index writes many small files, and direct memory is freed late. */
    private static final ArrayBlockingQueue<ByteBuffer> SPARE = new ArrayBlockingQueue<>(32);
    private final StorageFile file;
    private final IoTally.Counter counter;
    private ByteBuffer buffer;
    /** Null where writes are the caller's own (WRITEBACK: a buffered write only copies). */
    private final BackgroundIo.Queue writes;
    /** Buffers whose write is done, for the writer to fill again; guarded by itself. */
    private final ArrayDeque<ByteBuffer> written = new ArrayDeque<>();
    /** Buffers this output owns, the one being filled included. */
    private int owned = 1;
    private final CRC32 crc = new CRC32();
    /** The file offset of the buffer's first byte. */
    private long flushed;
    /** How many of the buffer's bytes the CRC already covers. */
    private int summed;
    private boolean closed;

    StorageIndexOutput(String description, String name, StorageFile file, IoTally.Counter counter,
            boolean writesInBackground) {
        super(description, name);
        this.file = file;
        this.counter = counter;
        this.writes = writesInBackground ? new BackgroundIo.Queue() : null;
        this.buffer = newBuffer();
    }

    private static ByteBuffer newBuffer() {
        ByteBuffer spare = SPARE.poll();
        return spare != null ? spare : ByteBuffer.allocateDirect(BUFFER_BYTES + ALIGNMENT)
                .alignedSlice(ALIGNMENT).order(ByteOrder.LITTLE_ENDIAN);
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

    @Override
    public void writeShort(short value) throws IOException {
        if (buffer.remaining() < Short.BYTES) flushBuffer();
        buffer.putShort(value);
    }

    @Override
    public void writeInt(int value) throws IOException {
        if (buffer.remaining() < Integer.BYTES) flushBuffer();
        buffer.putInt(value);
    }

    @Override
    public void writeLong(long value) throws IOException {
        if (buffer.remaining() < Long.BYTES) flushBuffer();
        buffer.putLong(value);
    }

    @Override
    public long getFilePointer() {
        return closed ? flushed : flushed + buffer.position();
    }

    @Override
    public long getChecksum() throws IOException {
        if (!closed) sumBuffered();
        return crc.getValue();
    }

    private void sumBuffered() {
        int end = buffer.position();
        if (summed < end) {
            crc.update(buffer.duplicate().limit(end).position(summed));
            summed = end;
        }
    }

    private void flushBuffer() throws IOException {
        flushBuffer(true);
    }

    /** Writes the buffer, and takes one to fill next when {@code another}. */
    private void flushBuffer(boolean another) throws IOException {
        sumBuffered();
        buffer.flip();
        int bytes = buffer.remaining();
        long at = flushed;
        if (writes == null) {
            file.write(buffer, at);
            buffer.clear();
        } else {
            ByteBuffer full = buffer;
            // The next buffer before the write is handed over: whatever fails, the output keeps one to fill.
            ByteBuffer next = another ? nextBuffer() : null;
            writes.submit(() -> {
                try {
                    file.write(full, at);
                } finally {
                    full.clear();
                    synchronized (written) {
                        written.add(full);
                    }
                }
            });
            buffer = next;
        }
        counter.written(bytes);
        flushed += bytes;
        summed = 0;
    }

    /** A written buffer, a new one while this output owns fewer than BUFFERS, or else the first write to finish. */
    private ByteBuffer nextBuffer() throws IOException {
        while (true) {
            synchronized (written) {
                ByteBuffer free = written.poll();
                if (free != null) return free;
            }
            if (owned < BUFFERS) {
                owned++;
                return newBuffer();
            }
            writes.awaitAtMost(owned - 2);
            writes.throwFailure();
        }
    }

    @Override
    public void close() throws IOException {
        if (closed) return;
        closed = true;
        IOException failed = null;
        try {
            if (buffer.position() > 0) flushBuffer(false);
        } catch (IOException e) {
            failed = e;
        }
        if (writes != null) {
            // Waits even when interrupted: a buffer still being written must not be reused.
            IOException background = writes.drain();
            if (background != null && failed == null) failed = background;
            else if (background != null && background != failed) failed.addSuppressed(background);
        }
        try {
            file.close();
        } catch (IOException e) {
            if (failed == null) failed = e; else failed.addSuppressed(e);
        }
        // By identity: a write that failed where it was made returned its buffer, which may still be the current one.
        Set<ByteBuffer> spares = Collections.newSetFromMap(new IdentityHashMap<>());
        spares.addAll(written);
        if (buffer != null) spares.add(buffer);
        for (ByteBuffer spare : spares) {
            spare.clear();
            SPARE.offer(spare);
        }
        written.clear();
        buffer = null;
        if (failed != null) throw failed;
    }
}

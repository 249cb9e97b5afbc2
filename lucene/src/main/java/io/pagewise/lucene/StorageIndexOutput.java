package io.pagewise.lucene;

import io.pagewise.StorageFile;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
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
    private static final int ALIGNMENT = 4096;
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

    StorageIndexOutput(String description, String name, StorageFile file, IoTally.Counter counter) {
        super(description, name);
        this.file = file;
        this.counter = counter;
        ByteBuffer spare = SPARE.poll();
        this.buffer = spare != null ? spare : ByteBuffer.allocateDirect(BUFFER_BYTES + ALIGNMENT)
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
        sumBuffered();
        buffer.flip();
        int bytes = buffer.remaining();
        file.write(buffer, flushed);
        counter.written(bytes);
        flushed += bytes;
        buffer.clear();
        summed = 0;
    }

    @Override
    public void close() throws IOException {
        if (closed) return;
        closed = true;
        IOException failed = null;
        try {
            if (buffer.position() > 0) flushBuffer();
        } catch (IOException e) {
            failed = e;
        }
        try {
            file.close();
        } catch (IOException e) {
            if (failed == null) failed = e; else failed.addSuppressed(e);
        }
        buffer.clear();
        SPARE.offer(buffer);
        buffer = null;
        if (failed != null) throw failed;
    }
}

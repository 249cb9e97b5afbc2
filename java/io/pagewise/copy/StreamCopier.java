package io.pagewise.copy;

import io.pagewise.Extent;
import io.pagewise.StorageFile;
import io.pagewise.device.BlockDevice;
import io.pagewise.device.Capability;
import io.pagewise.internal.BufferPool;
import io.pagewise.internal.Buffers;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.nio.channels.ReadableByteChannel;
import java.nio.channels.WritableByteChannel;
import java.util.List;

/**
 * Copies between a {@link BlockDevice} and a stream that cannot seek, such as standard input or output or a pipe:
 * what {@code pagewise copy - DST} and {@code pagewise copy SRC -} do. Both ends are used sequentially, one request
 * at a time, from the calling thread.
 *
 * <ul>
 * <li>{@link #copy(BlockDevice, WritableByteChannel)} writes every byte of the device in order; holes and zero
 * extents are not read but written as zeros, since a stream has no holes.</li>
 * <li>{@link #copy(ReadableByteChannel, BlockDevice)} writes the stream from offset 0 until its end, into a device
 * of fixed size (an NBD export, a block device, an existing file). A shorter stream leaves the device's bytes past
 * its end as they were; a longer one fills the device and then fails with a {@link CopyException} at the device's
 * size: its size is only known at its end, so the first bytes are written by then.</li>
 * <li>{@link #copy(ReadableByteChannel, StorageFile)} writes the stream into a file that grows with it: at the end
 * the file is at least as long as the stream (a new, empty file exactly as long).</li>
 * </ul>
 *
 * From a stream, all-zero blocks of {@link CopyOptions#sparseBlock()} become holes (or are skipped on a destination
 * that reads as zeros), as in {@link Copier}; {@link CopyOptions#allocated()}, {@link CopyOptions#destinationIsZero()},
 * {@link CopyOptions#flush()}, {@link CopyOptions#requestSize()} and {@link CopyOptions#progress()} apply, and
 * {@link CopyOptions#requests()} does not. Progress from a stream is told with a total of -1 until the stream ends.
 * Neither end is closed. A StreamCopier runs one copy.
 */
public final class StreamCopier {
    /** Runs asked of the source's map at once. */
    private static final int MAX_EXTENTS = 1024;

    private final CopyOptions options;
    private volatile boolean cancelled;
    private volatile long done;
    private long dataBytes;
    private long zeroedBytes;
    private long skippedBytes;

    /**
     * A copier for one copy.
     *
     * @param options how to copy
     */
    public StreamCopier(CopyOptions options) {
        this.options = options;
    }

    /** Stops a running copy at its next request: copy() then throws {@link Copier.CopyCancelledException}. */
    public void cancel() {
        cancelled = true;
    }

    /** {@return the bytes finished so far} */
    public long bytesDone() { return done; }

    /**
     * Writes all of source, in order, to out.
     *
     * @param source what to copy
     * @param out    where its bytes go, written sequentially
     * @return what the copy did: holes written as zeros count as zeroed
     * @throws CopyException when reading the source or writing out fails, naming the offset
     * @throws Copier.CopyCancelledException after {@link #cancel()}
     * @throws IOException when the source's size cannot be read
     */
    public CopyResult copy(BlockDevice source, WritableByteChannel out) throws IOException {
        long started = System.nanoTime();
        long total = source.size();
        int requestSize = requestSize(source);
        Copier.LOG.log(Level.DEBUG, () -> "copying " + source.name() + " (" + total + " bytes) to a stream in requests of "
                + requestSize + " bytes");
        ByteBuffer buffer = BufferPool.aligned(requestSize);
        ByteBuffer zeros = null;
        long position = 0;
        while (position < total) {
            List<Extent> extents;
            try {
                extents = source.extents(position, Math.min(total - position, 1L << 30), MAX_EXTENTS);
            } catch (IOException e) {
                throw new CopyException("reading the allocation map of " + source.name() + " at offset " + position
                        + " failed: " + e.getMessage(), position, e);
            }
            long mapped = position;
            for (Extent extent : extents) {
                long end = Math.min(total, extent.end());
                if (end <= position) continue;
                // A gap in the map is read as data.
                boolean hole = extent.hole() && extent.offset() <= position;
                if (!hole && extent.offset() > position) end = Math.min(end, extent.offset());
                while (position < end) {
                    checkCancelled(total);
                    int length = (int) Math.min(end - position, requestSize - position % requestSize);
                    ByteBuffer piece;
                    if (hole) {
                        if (zeros == null) zeros = BufferPool.aligned(requestSize);
                        piece = zeros.duplicate().limit(length);
                    } else {
                        piece = buffer.clear().limit(length);
                        read(source, piece, position);
                        piece.flip();
                    }
                    writeAll(out, piece, position);
                    if (hole) zeroedBytes += length; else dataBytes += length;
                    position += length;
                    progress(position, total);
                }
            }
            if (position == mapped) {
                throw new CopyException(source.name() + " described nothing at offset " + position, position, null);
            }
        }
        if (options.flush()) {
            // A stream has nothing to flush; the option is for a device.
            Copier.LOG.log(Level.DEBUG, "flush asked for: a stream has nothing to flush");
        }
        return finish(total, started);
    }

    /**
     * Writes the stream from offset 0 of destination until the stream ends.
     *
     * @param in          the stream, read until its end
     * @param destination where it goes; its size does not change
     * @return what the copy did; its size is the stream's length
     * @throws CopyException when reading or writing fails, naming the offset, when the destination is read-only, or
     *         when the stream is longer than the destination (whose first {@code size()} bytes are written by then)
     * @throws Copier.CopyCancelledException after {@link #cancel()}
     * @throws IOException when the destination's size cannot be read
     */
    public CopyResult copy(ReadableByteChannel in, BlockDevice destination) throws IOException {
        if (!destination.capabilities().has(Capability.WRITE)) {
            throw new CopyException("destination " + destination.name() + " is read-only", -1, null);
        }
        return fromStream(in, new StreamSink.DeviceSink(destination, options));
    }

    /**
     * Writes the stream from offset 0 of the file until the stream ends, growing the file as needed. Zero blocks
     * past the file's size when the copy started are skipped (they read as zeros once the file is extended over
     * them), unless {@link CopyOptions#allocated()}.
     *
     * @param in          the stream, read until its end
     * @param destination the file, open for writing
     * @return what the copy did; its size is the stream's length
     * @throws CopyException when reading or writing fails, naming the offset
     * @throws Copier.CopyCancelledException after {@link #cancel()}
     * @throws IOException when the file's size cannot be read or set
     */
    public CopyResult copy(ReadableByteChannel in, StorageFile destination) throws IOException {
        return fromStream(in, new StreamSink.FileSink(destination, options));
    }

    private CopyResult fromStream(ReadableByteChannel in, StreamSink sink) throws IOException {
        long started = System.nanoTime();
        int block = sink.blockSize();
        int requestSize = Math.max(block, Math.min(options.requestSize(), sink.maximumRequest()) / block * block);
        Copier.LOG.log(Level.DEBUG, () -> "copying a stream to " + sink.name() + " in requests of " + requestSize
                + " bytes");
        ByteBuffer buffer = BufferPool.aligned(requestSize);
        long position = 0;
        while (true) {
            checkCancelled(-1);
            int length = readChunk(in, buffer, requestSize, position);
            if (length == 0) break;
            long room = sink.limit() - position;
            if (length > room) {
                if (room > 0) writeRuns(sink, buffer, position, (int) room);
                throw new CopyException("destination " + sink.name() + " (" + sink.limit() + " bytes) is smaller than"
                        + " the input, which goes on past that size; its first " + sink.limit() + " bytes were written",
                        sink.limit(), null);
            }
            writeRuns(sink, buffer, position, length);
            position += length;
            progress(position, -1);
            if (length < requestSize) break;
        }
        try {
            sink.finish(position);
        } catch (IOException e) {
            throw new CopyException("finishing " + sink.name() + " after " + position + " bytes failed: " + e.getMessage(),
                    -1, e);
        }
        return finish(position, started);
    }

    /** Fills buffer with up to length bytes of the stream; {@return how many: fewer only at its end} */
    private static int readChunk(ReadableByteChannel in, ByteBuffer buffer, int length, long position)
            throws CopyException {
        buffer.clear().limit(length);
        try {
            while (buffer.hasRemaining()) {
                if (in.read(buffer) < 0) break;
            }
        } catch (IOException e) {
            throw new CopyException("reading the input stream at offset " + (position + buffer.position()) + " failed: "
                    + e.getMessage(), position + buffer.position(), e);
        }
        return buffer.position();
    }

    /** Writes buffer[0, length) at position: whole all-zero sparse blocks become zero runs, the rest data. */
    private void writeRuns(StreamSink sink, ByteBuffer buffer, long position, int length) throws CopyException {
        int sparse = options.sparseBlock();
        int runStart = 0;
        boolean runIsZero = false;
        for (int at = 0; at < length; ) {
            int next = sparse == 0 ? length
                    : (int) Math.min(length, (position + at) / sparse * sparse + sparse - position);
            boolean zero = sparse != 0 && next - at == sparse && Buffers.isZero(buffer, at, next);
            if (at > runStart && zero != runIsZero) {
                writeRun(sink, buffer, position, runStart, at, runIsZero);
                runStart = at;
            }
            runIsZero = zero;
            at = next;
        }
        writeRun(sink, buffer, position, runStart, length, runIsZero);
    }

    private void writeRun(StreamSink sink, ByteBuffer buffer, long position, int from, int to, boolean zero)
            throws CopyException {
        if (to <= from) return;
        long offset = position + from;
        try {
            if (zero) {
                long zeroed = sink.zero(offset, to - from);
                zeroedBytes += zeroed;
                skippedBytes += to - from - zeroed;
            } else {
                ByteBuffer run = buffer.duplicate().limit(to).position(from);
                sink.write(run, offset);
                dataBytes += to - from;
            }
        } catch (IOException e) {
            throw new CopyException((zero ? "zeroing " : "writing ") + sink.name() + " at offset " + offset + " (+"
                    + (to - from) + ") failed: " + e.getMessage(), offset, e);
        }
    }

    private int requestSize(BlockDevice source) throws IOException {
        int block = source.minimumBlockSize();
        return Math.max(block, Math.min(options.requestSize(), source.maximumBlockSize()) / block * block);
    }

    private static void read(BlockDevice source, ByteBuffer piece, long position) throws CopyException {
        int length = piece.remaining();
        try {
            source.readFully(piece, position);
            if (piece.hasRemaining()) throw new IOException(source.name() + " left its buffer's position behind");
        } catch (IOException e) {
            throw new CopyException("reading " + source.name() + " at offset " + position + " (+" + length + ") failed: "
                    + e.getMessage(), position, e);
        }
    }

    private static void writeAll(WritableByteChannel out, ByteBuffer piece, long position) throws CopyException {
        try {
            while (piece.hasRemaining()) out.write(piece);
        } catch (IOException e) {
            throw new CopyException("writing the output stream at offset " + (position + piece.position()) + " failed: "
                    + e.getMessage(), position + piece.position(), e);
        }
    }

    private void checkCancelled(long total) throws Copier.CopyCancelledException {
        if (!cancelled) return;
        throw total < 0 ? new Copier.CopyCancelledException(done) : new Copier.CopyCancelledException(done, total);
    }

    private void progress(long position, long total) {
        done = position;
        options.progress().progress(position, total);
    }

    private CopyResult finish(long total, long started) {
        options.progress().progress(total, total);
        CopyResult result = new CopyResult(total, dataBytes, zeroedBytes, skippedBytes, System.nanoTime() - started);
        Copier.LOG.log(Level.DEBUG, () -> "copied " + total + " bytes: " + dataBytes + " written, " + zeroedBytes
                + " zeroed, " + skippedBytes + " already zero");
        return result;
    }
}

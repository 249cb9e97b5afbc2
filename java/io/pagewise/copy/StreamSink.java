package io.pagewise.copy;

import io.pagewise.StorageFile;
import io.pagewise.device.BlockDevice;
import io.pagewise.device.Capability;
import io.pagewise.device.ZeroFlag;
import io.pagewise.internal.BufferPool;
import java.io.IOException;
import java.nio.ByteBuffer;

/** Where {@link StreamCopier} writes a stream: a device of fixed size, or a file that grows. */
abstract class StreamSink {
    abstract String name();

    /** {@return the alignment that requests keep} */
    abstract int blockSize();

    abstract int maximumRequest();

    /** {@return the most bytes it takes}, Long.MAX_VALUE for a file that grows */
    abstract long limit();

    /** Writes all of data at offset (any length: a partial last block is handled here). */
    abstract void write(ByteBuffer data, long offset) throws IOException;

    /** Makes [offset, offset + length) read as zeros, skipping what does already; {@return the bytes zeroed} */
    abstract long zero(long offset, long length) throws IOException;

    /** Called once the stream has ended after length bytes. */
    abstract void finish(long length) throws IOException;

    /** Writes zeros as data, for an end that cannot zero or for allocated zeros. */
    static void writeZeros(StreamSink sink, long offset, long length, int chunk) throws IOException {
        ByteBuffer zeros = BufferPool.aligned((int) Math.min(chunk, length));
        for (long at = offset, end = offset + length; at < end; ) {
            int n = (int) Math.min(zeros.capacity(), end - at);
            sink.write(zeros.duplicate().limit(n), at);
            at += n;
        }
    }

    /** A device of fixed size: NBD, a block device, an existing file. */
    static final class DeviceSink extends StreamSink {
        private final BlockDevice device;
        private final CopyOptions options;
        private final long size;
        private final boolean skipZeros;

        DeviceSink(BlockDevice device, CopyOptions options) throws IOException {
            this.device = device;
            this.options = options;
            this.size = device.size();
            this.skipZeros = !options.allocated()
                    && (options.destinationIsZero() || device.capabilities().has(Capability.STARTS_ZEROED));
        }

        @Override String name() { return device.name(); }

        @Override int blockSize() { return device.minimumBlockSize(); }

        @Override int maximumRequest() { return device.maximumBlockSize(); }

        @Override long limit() { return size; }

        @Override
        void write(ByteBuffer data, long offset) throws IOException {
            int block = blockSize();
            int tail = data.remaining() % block;
            long tailAt = offset + data.remaining() - tail;
            if (tail == 0 || tailAt + block > size) {
                device.write(data, offset, false);
                return;
            }
            // The stream ended inside a block: the device takes whole blocks, so the block's rest is read back.
            ByteBuffer head = data.duplicate().limit(data.limit() - tail);
            if (head.hasRemaining()) device.write(head, offset, false);
            ByteBuffer last = BufferPool.aligned(block);
            last.clear().limit(block);
            device.readFully(last, tailAt);
            last.clear();
            last.put(data.duplicate().position(data.limit() - tail)).clear().limit(block);
            device.write(last, tailAt, false);
            data.position(data.limit());
        }

        @Override
        long zero(long offset, long length) throws IOException {
            if (skipZeros) return 0;
            if (device.capabilities().has(Capability.ZERO)) {
                device.zero(offset, length, options.allocated() ? ZeroFlag.NONE : ZeroFlag.TRIM);
            } else {
                writeZeros(this, offset, length, options.requestSize());
            }
            return length;
        }

        @Override
        void finish(long length) throws IOException {
            if (options.flush()) device.flush();
        }
    }

    /** A file that grows as the stream is written. */
    static final class FileSink extends StreamSink {
        private final StorageFile file;
        private final CopyOptions options;
        /** Below it the file had bytes of its own; above it, it reads as zeros until written. */
        private final long initialSize;

        FileSink(StorageFile file, CopyOptions options) throws IOException {
            this.file = file;
            this.options = options;
            this.initialSize = options.destinationIsZero() ? 0 : file.size();
        }

        @Override String name() { return file.path().toString(); }

        @Override int blockSize() { return Math.max(1, file.requestAlignment()); }

        @Override int maximumRequest() { return Integer.MAX_VALUE; }

        @Override long limit() { return Long.MAX_VALUE; }

        @Override
        void write(ByteBuffer data, long offset) throws IOException {
            file.write(data, offset);
        }

        @Override
        long zero(long offset, long length) throws IOException {
            if (options.allocated()) {
                writeZeros(this, offset, length, options.requestSize());
                return length;
            }
            long below = Math.max(0, Math.min(length, initialSize - offset));
            if (below > 0) file.zero(offset, below, true);
            return below;
        }

        @Override
        void finish(long length) throws IOException {
            // Zero blocks skipped at the end are not in the file yet.
            if (file.size() < length) file.resize(length);
            if (options.flush()) file.flush();
        }
    }
}

package io.pagewise.copy;

import io.pagewise.device.BlockDevice;
import io.pagewise.device.Capability;
import io.pagewise.device.ZeroFlag;
import io.pagewise.internal.BufferPool;
import io.pagewise.internal.Buffers;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Set;
import java.util.concurrent.BlockingQueue;

/**
 * One of the copy's worker threads: takes {@link CopyWork} from the queue until {@link CopyWork#END}, reads each data
 * range and writes it (splitting out all-zero blocks as zeroing), or zeroes each hole range. A failure is recorded in
 * the {@link SharedCopyState}, which stops the copy.
 */
final class CopyWorker implements Runnable {
    private final BlockDevice source;
    private final BlockDevice destination;
    private final Set<ZeroFlag> zeroFlags;
    /** Zeros to write as data, made on first need. */
    private ByteBuffer zeros;
    private final BlockingQueue<CopyWork> queue;
    private final ByteBuffer buffer;
    private final boolean skipZeros;
    private final int sparseBlock;
    private final long tailEnd;
    private final Accumulator sum;
    private final SharedCopyState run;

    CopyWorker(CopySetup setup, CopyOptions options, BlockingQueue<CopyWork> queue, SharedCopyState run) {
        this.source = setup.source();
        this.destination = setup.destination();
        this.queue = queue;
        this.buffer = BufferPool.aligned(setup.requestSize());
        this.skipZeros = setup.skipZeros();
        // Zero runs are found in whole blocks of both devices, so that they are zeroed in whole blocks.
        this.sparseBlock = options.sparseBlock() == 0 ? 0 : Copier.lcm(options.sparseBlock(), setup.alignment());
        this.zeroFlags = options.allocated() ? ZeroFlag.NONE : ZeroFlag.TRIM;
        this.tailEnd = setup.tailEnd();
        this.sum = setup.sum();
        this.run = run;
    }

    @Override
    public void run() {
        while (true) {
            CopyWork work;
            try {
                work = queue.take();
            } catch (InterruptedException e) {
                run.cancel();
                return;
            }
            if (work == CopyWork.END) return;
            if (run.stopped()) continue;
            try {
                if (work.tail()) {
                    copyTail(work.offset(), (int) work.length());
                } else if (work.zero()) {
                    if (sum != null) sum.zero(work.offset(), work.length());
                    zero(work.offset(), work.length());
                } else {
                    copy(work.offset(), (int) work.length());
                }
                run.finished(work.length());
            } catch (CopyException e) {
                run.fail(e);
            } catch (IOException | RuntimeException e) {
                run.fail(new CopyException("copy failed at offset " + work.offset() + ": " + e.getMessage(),
                        work.offset(), e));
            }
        }
    }

    private void copy(long offset, int length) throws IOException {
        readSource(offset, length);
        if (sparseBlock == 0) {
            write(offset, 0, length);
            return;
        }
        // Runs of whole all-zero blocks (aligned on the device) become zeroing; the rest is written as is.
        int runStart = 0;
        boolean runIsZero = false;
        int at = 0;
        while (at < length) {
            int blockEnd = (int) Math.min(length, (offset + at) / sparseBlock * sparseBlock + sparseBlock - offset);
            boolean zero = blockEnd - at == sparseBlock && Buffers.isZero(buffer, at, blockEnd);
            if (at > runStart && zero != runIsZero) {
                flushRun(offset, runStart, at, runIsZero);
                runStart = at;
            }
            runIsZero = zero;
            at = blockEnd;
        }
        flushRun(offset, runStart, length, runIsZero);
    }

    /**
     * The copy's last piece, which ends inside a destination block that goes on past it: that block is read from
     * the destination, the source's bytes are put over its start and the piece is written to the block's end, so
     * that a device taking whole blocks only (an NBD server with a minimum block size) takes it, and the rest of
     * the block stays as it was.
     */
    private void copyTail(long offset, int length) throws IOException {
        long lastBlock = (offset + length) / destination.minimumBlockSize() * destination.minimumBlockSize();
        int keptAt = (int) (lastBlock - offset);
        int through = (int) (tailEnd - offset);
        buffer.clear().position(keptAt).limit(through);
        try {
            destination.readFully(buffer, lastBlock);
        } catch (IOException e) {
            throw new CopyException("reading " + destination.name() + " at offset " + lastBlock + " (+"
                    + (through - keptAt) + "), the block the copy ends inside, failed: " + e.getMessage(), lastBlock, e);
        }
        readSource(offset, length);
        writeOut(buffer.duplicate().clear().limit(through), offset);
        run.dataBytes.addAndGet(length);
    }

    /** Reads [offset, offset + length) of the source into the buffer's start and adds it to the checksum. */
    private void readSource(long offset, int length) throws IOException {
        buffer.clear().limit(length);
        try {
            source.readFully(buffer, offset);
            if (buffer.hasRemaining()) throw leftBehind(source, buffer, "readFully must fill the buffer");
        } catch (IOException e) {
            throw failed("reading", source, offset, length, e);
        }
        if (sum != null) sum.data(offset, buffer.duplicate().flip());
    }

    private void flushRun(long offset, int from, int to, boolean zero) throws IOException {
        if (to <= from) return;
        if (zero) {
            zero(offset + from, to - from);
        } else {
            write(offset, from, to);
        }
    }

    /** Zeroes through the device, or writes zeros as data where it cannot zero. */
    private void zeroOrWrite(long offset, long length) throws IOException {
        if (destination.capabilities().has(Capability.ZERO)) {
            destination.zero(offset, length, zeroFlags);
            return;
        }
        if (zeros == null) zeros = BufferPool.aligned(buffer.capacity());
        for (long at = offset, end = offset + length; at < end; ) {
            int n = (int) Math.min(zeros.capacity(), end - at);
            ByteBuffer slice = zeros.duplicate().limit(n);
            destination.write(slice, at, false);
            at += n;
        }
    }

    private void write(long offset, int from, int to) throws IOException {
        ByteBuffer slice = buffer.duplicate();
        slice.limit(to).position(from);
        writeOut(slice, offset + from);
        run.dataBytes.addAndGet(to - from);
    }

    private void writeOut(ByteBuffer slice, long at) throws IOException {
        int length = slice.remaining();
        try {
            destination.write(slice, at, false);
            if (slice.hasRemaining()) throw leftBehind(destination, slice, "write must write all");
        } catch (IOException e) {
            throw failed("writing", destination, at, length, e);
        }
    }

    /** A device that broke the contract: it returned with bytes of the buffer still behind its position. */
    private static IOException leftBehind(BlockDevice device, ByteBuffer buffer, String rule) {
        return new IOException(device.name() + " left " + buffer.remaining() + " bytes of the buffer behind its "
                + "position (BlockDevice." + rule + " and move the position)");
    }

    private static CopyException failed(String doing, BlockDevice device, long offset, long length, IOException e) {
        return new CopyException(doing + " " + device.name() + " at offset " + offset + " (+" + length + ") failed: "
                + e.getMessage(), offset, e);
    }

    private void zero(long offset, long length) throws IOException {
        if (skipZeros) {
            run.skippedBytes.addAndGet(length);
            return;
        }
        try {
            zeroOrWrite(offset, length);
        } catch (IOException e) {
            throw new CopyException("zeroing " + destination.name() + " at offset " + offset + " (+" + length
                    + ") failed: " + e.getMessage(), offset, e);
        }
        run.zeroedBytes.addAndGet(length);
    }
}

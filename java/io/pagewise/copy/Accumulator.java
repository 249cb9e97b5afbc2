package io.pagewise.copy;

import io.pagewise.internal.Buffers;
import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * The {@link BlockHash} of one image, built from its pieces in any order and from many threads at once: each
 * {@link #data} hashes the whole blocks it carries in the calling thread, so hashing runs as parallel as the callers;
 * a block that arrives in several pieces is assembled first. {@link #zero} adds a range of zeros without hashing it.
 * Every byte of the image must be given exactly once before {@link #finish()}.
 */
public final class Accumulator {
    /** Zero-block digests fed to the outer hash per update call, for long holes. */
    private static final int ZERO_BATCH = 1024;

    private final long size;
    private final int blockSize;
    private final long blocks;
    private final byte[] zeroBlock;
    private final byte[] zeroBatch;
    private final ThreadLocal<MessageDigest> inner;
    private final MessageDigest outer;
    /** Block index → its digest (byte[]) or, for a run of whole zero blocks starting there, the run's length (Long). */
    private final TreeMap<Long, Object> ready = new TreeMap<>();
    /** Blocks that arrived in part, by index. */
    private final Map<Long, byte[]> partial = new HashMap<>();
    private final Map<Long, Integer> partialFilled = new HashMap<>();
    /** The next block the outer hash takes. */
    private long next;
    private byte[] result;

    Accumulator(BlockHash hash, long size) {
        if (size < 0) throw new IllegalArgumentException("image size " + size + " is negative");
        this.size = size;
        this.blockSize = hash.blockSize();
        this.blocks = (size + blockSize - 1) / blockSize;
        this.zeroBlock = hash.zeroBlockDigest();
        this.zeroBatch = new byte[zeroBlock.length * ZERO_BATCH];
        for (int i = 0; i < ZERO_BATCH; i++) System.arraycopy(zeroBlock, 0, zeroBatch, i * zeroBlock.length, zeroBlock.length);
        this.inner = ThreadLocal.withInitial(hash::newDigest);
        this.outer = hash.newDigest();
    }

    /** {@return the length of the image} */
    public long size() {
        return size;
    }

    /**
     * Adds the image's bytes at offset: the remaining bytes of data, whose position is left where it is.
     *
     * @param offset where the bytes are in the image
     * @param data   the bytes
     * @throws IllegalArgumentException when the range is not within the image
     * @throws IllegalStateException    after {@link #finish()}
     */
    public void data(long offset, ByteBuffer data) {
        long end = checkRange(offset, data.remaining());
        for (long block = offset / blockSize; block * blockSize < end; block++) {
            long blockStart = block * blockSize;
            long blockEnd = Math.min(size, blockStart + blockSize);
            long from = Math.max(offset, blockStart);
            long to = Math.min(end, blockEnd);
            ByteBuffer piece = data.slice(data.position() + (int) (from - offset), (int) (to - from));
            if (from == blockStart && to == blockEnd) {
                record(block, digestOf(piece));
            } else {
                addPart(block, (int) (from - blockStart), piece, (int) (blockEnd - blockStart));
            }
        }
    }

    /**
     * Adds length bytes of zeros at offset, without hashing whole blocks of them.
     *
     * @param offset where the zeros are in the image
     * @param length how many
     * @throws IllegalArgumentException when the range is not within the image
     * @throws IllegalStateException    after {@link #finish()}
     */
    public void zero(long offset, long length) {
        long end = checkRange(offset, length);
        long firstWhole = (offset + blockSize - 1) / blockSize;
        long endWhole = end == size ? blocks : end / blockSize; // blocks [firstWhole, endWhole) lie wholly inside
        if (endWhole * blockSize > size && endWhole > firstWhole) endWhole--; // a short last block is hashed as data
        if (firstWhole >= endWhole) {
            zeroAsData(offset, end);
            return;
        }
        zeroAsData(offset, firstWhole * blockSize);
        record(firstWhole, endWhole - firstWhole);
        zeroAsData(endWhole * blockSize, end);
    }

    /**
     * {@return the checksum}, once every byte has been added; later calls return it again
     *
     * @throws IllegalStateException when some bytes were never added, naming the first block that is missing
     */
    public synchronized byte[] finish() {
        if (result != null) return result.clone();
        if (next < blocks) {
            throw new IllegalStateException("the image's bytes from offset " + next * blockSize + " were not all given"
                    + " (" + (blocks - next) + " of " + blocks + " blocks missing)");
        }
        outer.update(BlockHash.lengthField(size));
        result = outer.digest();
        return result.clone();
    }

    /** Zeros that cover no whole block (the edges of a range, a short last block): assembled and hashed as data. */
    private void zeroAsData(long from, long to) {
        if (to <= from) return;
        ByteBuffer zeros = ByteBuffer.allocate((int) Math.min(to - from, 2L * blockSize));
        for (long at = from; at < to; at += zeros.capacity()) {
            data(at, zeros.clear().limit((int) Math.min(zeros.capacity(), to - at)));
        }
    }

    private long checkRange(long offset, long length) {
        if (offset < 0 || length < 0 || offset > size - length) {
            throw new IllegalArgumentException("range at " + offset + " (+" + length + ") is outside the image of "
                    + size + " bytes");
        }
        return offset + length;
    }

    /** The digest of one whole block (or the short last one); a full block of zeros is not hashed again. */
    private byte[] digestOf(ByteBuffer block) {
        if (block.remaining() == blockSize && Buffers.isZero(block, block.position(), block.limit())) return zeroBlock;
        MessageDigest digest = inner.get();
        digest.update(block);
        return digest.digest();
    }

    private void addPart(long block, int at, ByteBuffer piece, int blockLength) {
        byte[] whole;
        synchronized (this) {
            if (result != null) throw new IllegalStateException("the checksum is already finished");
            whole = partial.computeIfAbsent(block, b -> new byte[blockLength]);
            piece.get(piece.position(), whole, at, piece.remaining());
            int filled = partialFilled.merge(block, piece.remaining(), Integer::sum);
            if (filled < blockLength) return;
            partial.remove(block);
            partialFilled.remove(block);
        }
        record(block, digestOf(ByteBuffer.wrap(whole)));
    }

    /** Takes a block's digest, or a run of zero blocks (a Long), and feeds the outer hash whatever is now in order. */
    private synchronized void record(long block, Object digestOrRun) {
        if (result != null) throw new IllegalStateException("the checksum is already finished");
        if (block < next || ready.containsKey(block)) {
            throw new IllegalStateException("block " + block + " (offset " + block * blockSize + ") was given twice");
        }
        ready.put(block, digestOrRun);
        Map.Entry<Long, Object> first;
        while ((first = ready.firstEntry()) != null && first.getKey() == next) {
            ready.pollFirstEntry();
            if (first.getValue() instanceof Long) {
                long run = (Long) first.getValue();
                for (long left = run; left > 0; left -= ZERO_BATCH) {
                    outer.update(zeroBatch, 0, (int) Math.min(ZERO_BATCH, left) * zeroBlock.length);
                }
                next += run;
            } else {
                outer.update((byte[]) first.getValue());
                next++;
            }
        }
    }
}

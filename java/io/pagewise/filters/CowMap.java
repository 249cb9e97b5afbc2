package io.pagewise.filters;

import io.pagewise.StorageFile;
import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.BitSet;

/**
 * Which blocks a copy-on-write overlay holds, one byte per block, and where it keeps that in the overlay file.
 *
 * <p>The file holds the blocks at their own offsets (block i at i × blockSize, sparse where never written), then a
 * 4 KiB header, then the map. A block is {@link #ABSENT} (read the base), {@link #DATA} (read the overlay) or
 * {@link #ZERO} (reads as zeros: trimmed or zeroed through the filter).
 */
final class CowMap {
    static final byte ABSENT = 0;
    static final byte DATA = 1;
    static final byte ZERO = 2;

    private static final byte[] MAGIC = "PWCOWMAP".getBytes(StandardCharsets.US_ASCII);
    private static final int VERSION = 1;
    private static final int HEADER = 4096;
    /** The map is written back in pieces of this many blocks, the ones that changed since the last write. */
    private static final int CHUNK = 4096;
    private static final VarHandle STATES = MethodHandles.arrayElementVarHandle(byte[].class);

    private final byte[] states;
    private final int blockSize;
    private final long mapOffset;
    private final BitSet dirty = new BitSet();

    private CowMap(byte[] states, int blockSize, long dataEnd) {
        this.states = states;
        this.blockSize = blockSize;
        this.mapOffset = dataEnd + HEADER;
    }

    /** The number of blocks a device of size bytes has, or an IllegalArgumentException when the map cannot hold them. */
    static int blocks(long size, int blockSize) {
        long blocks = (size + blockSize - 1) / blockSize;
        if (blocks > Integer.MAX_VALUE - 16) {
            throw new IllegalArgumentException("filter cow: blocksize=" + blockSize + " is too small for a device of "
                    + size + " bytes");
        }
        return (int) blocks;
    }

    /** Sizes a new, empty overlay file and writes its header; every block is ABSENT. */
    static CowMap create(StorageFile file, long size, int blockSize) throws IOException {
        int blocks = blocks(size, blockSize);
        long dataEnd = (long) blocks * blockSize;
        file.resize(dataEnd + HEADER + blocks);
        ByteBuffer header = ByteBuffer.allocate(HEADER);
        header.put(MAGIC).putInt(VERSION).putInt(blockSize).putLong(size).putLong(blocks).clear();
        file.write(header, dataEnd);
        return new CowMap(new byte[blocks], blockSize, dataEnd);
    }

    /**
     * Reads the map of an overlay this filter wrote before, checking that it was made for a base of this size (and
     * this block size, when one is asked for: 0 takes the overlay's).
     */
    static CowMap load(StorageFile file, long size, int blockSize) throws IOException {
        long length = file.size();
        for (int shift = 12; shift <= 24; shift++) {
            int candidate = 1 << shift;
            int blocks = blocks(size, candidate);
            long dataEnd = (long) blocks * candidate;
            if (length != dataEnd + HEADER + blocks) continue;
            ByteBuffer header = ByteBuffer.allocate(MAGIC.length + 24);
            file.readFully(header, dataEnd);
            header.flip();
            byte[] magic = new byte[MAGIC.length];
            header.get(magic);
            if (!java.util.Arrays.equals(magic, MAGIC) || header.getInt() != VERSION) continue;
            int stored = header.getInt();
            long storedSize = header.getLong();
            if (stored != candidate || storedSize != size) continue;
            if (blockSize != 0 && blockSize != stored) {
                throw new IllegalArgumentException("filter cow: overlay " + file.path() + " has blocksize=" + stored
                        + ", not " + blockSize);
            }
            byte[] states = new byte[blocks];
            file.readFully(ByteBuffer.wrap(states), dataEnd + HEADER);
            for (int i = 0; i < blocks; i++) {
                if (states[i] < ABSENT || states[i] > ZERO) {
                    throw new IOException("overlay " + file.path() + ": damaged map, block " + i + " has state "
                            + states[i]);
                }
            }
            return new CowMap(states, stored, dataEnd);
        }
        throw new IllegalArgumentException("filter cow: " + file.path() + " (" + length + " bytes) is not an overlay "
                + "of a " + size + "-byte device (an existing overlay must be one this filter made over the same base)");
    }

    int blockSize() { return blockSize; }

    int blocks() { return states.length; }

    byte get(long block) { return (byte) STATES.getAcquire(states, (int) block); }

    /** Sets a block's state, after the data it names is in the file. */
    void set(long block, byte state) {
        STATES.setRelease(states, (int) block, state);
        synchronized (dirty) {
            dirty.set((int) (block / CHUNK));
        }
    }

    /** The number of blocks in a state. */
    long count(byte state) {
        long n = 0;
        for (int i = 0; i < states.length; i++) {
            if (get(i) == state) n++;
        }
        return n;
    }

    /** A copy of the pieces of the map changed since the last snapshot, to {@link #store} once their data is synced. */
    Snapshot snapshot() {
        BitSet chunks;
        synchronized (dirty) {
            chunks = (BitSet) dirty.clone();
            dirty.clear();
        }
        Snapshot s = new Snapshot(chunks, new byte[chunks.cardinality()][]);
        int i = 0;
        for (int c = chunks.nextSetBit(0); c >= 0; c = chunks.nextSetBit(c + 1)) {
            int from = c * CHUNK;
            byte[] piece = new byte[Math.min(CHUNK, states.length - from)];
            for (int j = 0; j < piece.length; j++) piece[j] = get(from + j);
            s.pieces[i++] = piece;
        }
        return s;
    }

    /** The changed pieces of the map as they were when {@link #snapshot} copied them. */
    record Snapshot(BitSet chunks, byte[][] pieces) {}

    /** Writes a snapshot's pieces into the file (not synced); on failure they are marked changed again. */
    void store(StorageFile file, Snapshot s) throws IOException {
        int i = 0;
        try {
            for (int c = s.chunks.nextSetBit(0); c >= 0; c = s.chunks.nextSetBit(c + 1)) {
                file.write(ByteBuffer.wrap(s.pieces[i++]), mapOffset + (long) c * CHUNK);
            }
        } catch (IOException | RuntimeException e) {
            synchronized (dirty) {
                dirty.or(s.chunks);
            }
            throw e;
        }
    }
}

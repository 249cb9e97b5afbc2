package io.pagewise.backends;

import io.pagewise.device.BlockDevice;
import io.pagewise.device.Capabilities;
import io.pagewise.device.Capability;
import io.pagewise.device.ZeroFlag;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Set;
import java.util.function.ObjLongConsumer;

/** A volatile device held in memory (at most 2 GiB), writable, zero-filled when made; for tests and demos. */
public final class MemoryDevice implements BlockDevice {
    private static final Capabilities CAPABILITIES = Capabilities.WRITES.with(Capability.MULTI_CONN);

    private final byte[] data;

    /**
     * A zero-filled device.
     *
     * @param size its size in bytes
     */
    public MemoryDevice(int size) {
        this.data = new byte[size];
    }

    @Override
    public long size() {
        return data.length;
    }

    @Override
    public synchronized void readFully(ByteBuffer dst, long offset) {
        dst.put(data, (int) offset, dst.remaining());
    }

    @Override
    public synchronized void readFully(ByteBuffer[] dsts, long offset) {
        eachInTurn(dsts, offset, this::readFully);
    }

    @Override
    public synchronized void write(ByteBuffer src, long offset, boolean fua) {
        src.get(data, (int) offset, src.remaining());
    }

    @Override
    public synchronized void write(ByteBuffer[] srcs, long offset, boolean fua) {
        eachInTurn(srcs, offset, (src, at) -> write(src, at, fua));
    }

    /** Runs transfer on each buffer in turn, each at the offset where the one before it ended. */
    private static void eachInTurn(ByteBuffer[] buffers, long offset, ObjLongConsumer<ByteBuffer> transfer) {
        long at = offset;
        for (ByteBuffer buffer : buffers) {
            int n = buffer.remaining();
            transfer.accept(buffer, at);
            at += n;
        }
    }

    @Override
    public synchronized void zero(long offset, long length, Set<ZeroFlag> flags) {
        Arrays.fill(data, (int) offset, (int) (offset + length), (byte) 0);
    }

    @Override
    public void trim(long offset, long length, boolean fua) {
        zero(offset, length, ZeroFlag.TRIM);
    }

    /** {@return everything but a map of holes}: one array serves every user, so a flush covers all their writes */
    @Override
    public Capabilities capabilities() { return CAPABILITIES; }

    /** {@return "memory"}: messages that name a device give its size on their own */
    @Override
    public String name() {
        return "memory";
    }

    @Override
    public String toString() {
        return "memory (" + data.length + " bytes)";
    }
}

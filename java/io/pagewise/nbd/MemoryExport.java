package io.pagewise.nbd;

import java.io.IOException;
import java.nio.ByteBuffer;

/** A volatile export held in memory (at most 2 GiB), for tests and demos. */
public final class MemoryExport implements Export {
    private final byte[] data;
    private final boolean readOnly;

    /**
     * A zero-filled export.
     *
     * @param size     its size in bytes
     * @param readOnly true to refuse writes
     */
    public MemoryExport(int size, boolean readOnly) {
        this.data = new byte[size];
        this.readOnly = readOnly;
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
    public synchronized void write(ByteBuffer src, long offset, boolean fua) throws IOException {
        if (readOnly) throw new NbdException(NbdException.EPERM, "export is read-only");
        src.get(data, (int) offset, src.remaining());
    }

    @Override
    public synchronized void zero(long offset, long length, boolean mayTrim, boolean fast, boolean fua) {
        java.util.Arrays.fill(data, (int) offset, (int) (offset + length), (byte) 0);
    }

    @Override
    public void trim(long offset, long length, boolean fua) {
        zero(offset, length, true, false, fua);
    }

    @Override
    public boolean canWrite() { return !readOnly; }

    @Override
    public boolean canFlush() { return !readOnly; }

    @Override
    public boolean canFua() { return !readOnly; }

    @Override
    public boolean canTrim() { return !readOnly; }

    @Override
    public boolean canZero() { return !readOnly; }

    @Override
    public boolean canFastZero() { return !readOnly; }

    @Override
    public boolean canMultiConn() { return true; }

    @Override
    public String toString() {
        return "memory (" + data.length + " bytes)";
    }
}

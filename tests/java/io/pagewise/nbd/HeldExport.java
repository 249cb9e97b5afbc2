package io.pagewise.nbd;

import io.pagewise.backends.MemoryDevice;
import io.pagewise.device.BlockDevice;
import io.pagewise.device.Capabilities;
import io.pagewise.device.Capability;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * A writable memory export whose reads and writes each first wait for the test's {@link Hold} (a gate, a barrier),
 * so that a test can keep requests inside the export while it looks at the server.
 */
final class HeldExport implements BlockDevice {
    /** What every read and write waits for before it reaches the memory. */
    @FunctionalInterface
    interface Hold {
        void await() throws IOException;
    }

    private final MemoryDevice memory;
    private final Hold hold;

    HeldExport(int size, Hold hold) {
        this.memory = new MemoryDevice(size);
        this.hold = hold;
    }

    @Override
    public long size() {
        return memory.size();
    }

    @Override
    public void readFully(ByteBuffer dst, long offset) throws IOException {
        hold.await();
        memory.readFully(dst, offset);
    }

    @Override
    public void write(ByteBuffer src, long offset, boolean fua) throws IOException {
        hold.await();
        memory.write(src, offset, fua);
    }

    @Override
    public Capabilities capabilities() {
        return Capabilities.of(Capability.WRITE);
    }
}

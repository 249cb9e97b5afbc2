package io.pagewise.nbd;

import io.pagewise.backends.MemoryDevice;
import io.pagewise.device.BlockDevice;
import io.pagewise.device.Capabilities;
import io.pagewise.device.Capability;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.ByteBuffer;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A writable export whose reads and writes each first wait for what the test gives them (a gate, a barrier, a
 * count), so that a test can keep requests inside the export while it looks at the server. Closing it closes the
 * device it holds.
 */
record HeldExport(BlockDevice device, HeldExport.Hold beforeRead, HeldExport.Hold beforeWrite) implements BlockDevice {
    /** What a read or a write does before it reaches the device. */
    @FunctionalInterface
    interface Hold {
        void await() throws IOException;
    }

    /** {@return a memory export of size bytes whose reads and writes all wait for hold} */
    static HeldExport memory(int size, Hold hold) {
        return new HeldExport(new MemoryDevice(size), hold, hold);
    }

    /** {@return a hold that counts entered down, then waits up to 60 s until the test counts open down} */
    static Hold gate(CountDownLatch entered, CountDownLatch open) {
        return () -> {
            entered.countDown();
            try {
                if (!open.await(60, TimeUnit.SECONDS)) throw new IOException("the test never opened the gate");
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new InterruptedIOException("interrupted at the gate");
            }
        };
    }

    @Override
    public long size() throws IOException {
        return device.size();
    }

    @Override
    public void readFully(ByteBuffer dst, long offset) throws IOException {
        beforeRead.await();
        device.readFully(dst, offset);
    }

    @Override
    public void write(ByteBuffer src, long offset, boolean fua) throws IOException {
        beforeWrite.await();
        device.write(src, offset, fua);
    }

    @Override
    public Capabilities capabilities() {
        return Capabilities.of(Capability.WRITE);
    }

    @Override
    public void close() throws IOException {
        device.close();
    }
}

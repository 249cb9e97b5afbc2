package io.pagewise;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/**
 * What an interrupt does to a {@link StorageFile}, the same on the native and the pure-Java path (InterruptsTest and
 * FallbackPathTest run it): nothing to the file. The interrupted thread's call completes and its interrupt status
 * stays set; other threads' I/O goes on; the file stays open until it is closed.
 */
final class Interrupts {
    private static final int SIZE = 1 << 20;
    private static final int BLOCK = 4096;

    private Interrupts() {}

    static void assertAnInterruptClosesNothing(Path dir, CacheMode mode) throws Exception {
        byte[] data = Fixtures.random(19, SIZE);
        try (StorageFile file = StorageFile.open(dir.resolve("interrupts-" + mode), mode, StandardOpenOption.CREATE_NEW,
                StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            file.write(ByteBuffer.wrap(data), 0);
            callsOfAnInterruptedThreadComplete(file, data);
            interruptsDuringIoLeaveOtherThreadsAlone(file, data);
            // Again, now that an interrupt in the middle of a call may have cost the pure-Java path its FileChannel.
            callsOfAnInterruptedThreadComplete(file, data);
            file.resize(SIZE + BLOCK);
            assertEquals(SIZE + BLOCK, file.size());
            file.resize(SIZE);
            assertTrue(file.isOpen());
            assertArrayEquals(data, Fixtures.readFully(file, 0, SIZE), "after the interrupts");
        }
    }

    /** A thread whose interrupt status is set before each call: every call works, and the status stays set. */
    private static void callsOfAnInterruptedThreadComplete(StorageFile file, byte[] data) throws Exception {
        AtomicReference<Throwable> failure = new AtomicReference<>();
        AtomicReference<String> statusLost = new AtomicReference<>();
        Thread interrupted = new Thread(() -> {
            Thread.currentThread().interrupt();
            try {
                String[] calls = {"read", "readFully", "write", "write with FUA", "flush", "size"};
                for (String call : calls) {
                    switch (call) {
                        case "read": {
                            ByteBuffer b = ByteBuffer.allocate(BLOCK);
                            assertEquals(BLOCK, file.read(b, BLOCK));
                            assertArrayEquals(Arrays.copyOfRange(data, BLOCK, 2 * BLOCK), b.array());
                            break;
                        }
                        case "readFully":
                            assertArrayEquals(Arrays.copyOfRange(data, 0, 3 * BLOCK), Fixtures.readFully(file, 0, 3 * BLOCK));
                            break;
                        case "write":
                            file.write(ByteBuffer.wrap(data, 5 * BLOCK, BLOCK), 5 * BLOCK);
                            break;
                        case "write with FUA":
                            file.write(new ByteBuffer[] {ByteBuffer.wrap(data, 6 * BLOCK, BLOCK)}, 6 * BLOCK, true);
                            break;
                        case "flush":
                            file.flush();
                            break;
                        default:
                            assertEquals(SIZE, file.size());
                    }
                    if (!Thread.currentThread().isInterrupted() && statusLost.get() == null) statusLost.set(call);
                    Thread.currentThread().interrupt();
                }
            } catch (Throwable e) {
                failure.set(e);
            }
        }, "interrupted-caller");
        interrupted.start();
        interrupted.join(TimeUnit.SECONDS.toMillis(20));
        if (failure.get() != null) throw new AssertionError("a call of an interrupted thread failed: " + failure.get(), failure.get());
        assertNull(statusLost.get(), "the interrupt status was cleared by");
        assertTrue(file.isOpen());
    }

    /**
     * One thread reads while it is interrupted over and over (it clears its status now and then, so that interrupts
     * also arrive in the middle of a call); another reads at the same time. Neither may fail.
     */
    private static void interruptsDuringIoLeaveOtherThreadsAlone(StorageFile file, byte[] data) throws Exception {
        AtomicReference<Throwable> failure = new AtomicReference<>();
        AtomicLong victimReads = new AtomicLong();
        AtomicLong bystanderReads = new AtomicLong();
        long stopAt = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(300);
        Thread victim = reader("interrupted-reader", file, data, stopAt, victimReads, failure, true);
        Thread bystander = reader("bystander", file, data, stopAt, bystanderReads, failure, false);
        victim.start();
        bystander.start();
        while (victim.isAlive()) {
            victim.interrupt();
            LockSupport.parkNanos(50_000);
        }
        victim.join();
        bystander.join(TimeUnit.SECONDS.toMillis(20));
        if (failure.get() != null) throw new AssertionError("I/O failed while a reader was interrupted: " + failure.get(), failure.get());
        assertTrue(victimReads.get() > 10 && bystanderReads.get() > 10, victimReads + " and " + bystanderReads + " reads");
    }

    private static Thread reader(String name, StorageFile file, byte[] data, long stopAt, AtomicLong reads,
                                 AtomicReference<Throwable> failure, boolean clearsNowAndThen) {
        return new Thread(() -> {
            ByteBuffer b = ByteBuffer.allocateDirect(16 * BLOCK);
            byte[] got = new byte[b.capacity()];
            try {
                for (int i = 0; System.nanoTime() < stopAt; i++) {
                    int offset = (i * 7 % (SIZE / b.capacity())) * b.capacity();
                    b.clear();
                    file.readFully(b, offset);
                    b.flip().get(got);
                    if (!Arrays.equals(data, offset, offset + got.length, got, 0, got.length)) {
                        throw new AssertionError(name + ": wrong bytes at " + offset);
                    }
                    reads.incrementAndGet();
                    if (clearsNowAndThen && i % 2 == 0) Thread.interrupted();
                }
            } catch (Throwable e) {
                failure.compareAndSet(null, e);
            }
        }, name);
    }
}

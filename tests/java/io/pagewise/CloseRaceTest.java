package io.pagewise;

import static java.nio.file.StandardOpenOption.READ;
import static java.nio.file.StandardOpenOption.WRITE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.Closeable;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Threads keep doing every kind of I/O while another thread closes the file. Each operation either succeeds
 * (only if it began before close finished) or throws ClosedChannelException; nothing else. Files opened right after
 * the close, which are likely to get the closed descriptor's number, are never touched by the late operations.
 */
@Timeout(60)
class CloseRaceTest {
    private static final int WORKERS = 6;
    private static final int SIZE = 1 << 20;
    private static final int ROUNDS = 12;

    @TempDir
    Path dir;

    @ParameterizedTest
    @EnumSource(CacheMode.class)
    void operationsRacingCloseSucceedOrThrowClosedChannelOnly(CacheMode mode) throws Exception {
        Path racing = dir.resolve("racing");
        Path bystander = dir.resolve("bystander");
        byte[] bystanderContent = new byte[SIZE];
        Arrays.fill(bystanderContent, (byte) 0x55);
        Files.write(bystander, bystanderContent);
        for (int round = 0; round < ROUNDS; round++) {
            Files.write(racing, new byte[SIZE]);
            race(mode, racing, bystander, round);
            assertTrue(Arrays.equals(bystanderContent, Files.readAllBytes(bystander)),
                    mode + " round " + round + ": a late operation reached a file opened after close");
            assertEquals(SIZE, Files.size(bystander));
        }
    }

    private void race(CacheMode mode, Path racing, Path bystander, int round) throws Exception {
        StorageFile file = StorageFile.open(racing, mode, READ, WRITE);
        List<Throwable> errors = Collections.synchronizedList(new ArrayList<>());
        AtomicInteger closedSeen = new AtomicInteger();
        CountDownLatch warmedUp = new CountDownLatch(WORKERS * 20);
        RaceFlags flags = new RaceFlags();
        List<Thread> workers = new ArrayList<>();
        for (int w = 0; w < WORKERS; w++) {
            Random random = new Random(round * 100L + w);
            Thread thread = new Thread(() -> {
                ByteBuffer heap = ByteBuffer.allocate(8192);
                ByteBuffer direct = ByteBuffer.allocateDirect(8192);
                byte[] ones = new byte[8192];
                Arrays.fill(ones, (byte) 0xAA);
                while (!flags.stop) {
                    boolean afterClose = flags.closed;
                    int op = random.nextInt(12);
                    long offset = random.nextInt(SIZE - 8192);
                    try {
                        switch (op) {
                            case 0: case 1: file.write(heap.clear().put(ones).flip(), offset); break;
                            case 2: file.write(direct.clear().put(ones).flip(), offset, random.nextBoolean()); break;
                            case 3: case 4: file.read(heap.clear(), offset); break;
                            case 5: file.read(direct.clear(), offset); break;
                            case 6: file.flush(); break;
                            case 7: file.size(); break;
                            case 8: file.zero(offset, 5000, random.nextBoolean()); break;
                            case 9: file.advise(offset, 8192, AccessHint.values()[random.nextInt(6)]); break;
                            case 10: file.extents(0, SIZE); break;
                            default: if (random.nextBoolean()) file.prefetch(offset, 8192); else file.evict(offset, 8192);
                        }
                        if (afterClose) errors.add(new AssertionError("op " + op + " succeeded after close returned"));
                    } catch (ClosedChannelException e) {
                        closedSeen.incrementAndGet();
                        if (!e.getMessage().contains(racing.toString())) errors.add(e);
                    } catch (Throwable e) {
                        errors.add(e);
                    }
                    warmedUp.countDown();
                }
            }, "racer-" + w);
            workers.add(thread);
            thread.start();
        }
        List<Closeable> opened = new ArrayList<>();
        try {
            assertTrue(warmedUp.await(20, TimeUnit.SECONDS), "workers did not get going");
            file.close();
            flags.closed = true;
            // Likely to reuse the closed descriptor number: a native open, a JDK channel, another native open.
            opened.add(StorageFile.open(bystander, CacheMode.WRITEBACK, READ, WRITE));
            opened.add(FileChannel.open(bystander, READ, WRITE));
            opened.add(StorageFile.open(bystander, mode, READ, WRITE));
            int seen = closedSeen.get();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (closedSeen.get() < seen + WORKERS * 10 && System.nanoTime() < deadline) Thread.sleep(1);
        } finally {
            flags.stop = true;
            for (Thread thread : workers) thread.join(20_000);
            for (Closeable c : opened) c.close();
        }
        if (!errors.isEmpty()) {
            AssertionError failure = new AssertionError(mode + " round " + round + ": " + errors.size()
                    + " unexpected outcomes, first: " + errors.get(0), errors.get(0));
            throw failure;
        }
        assertTrue(closedSeen.get() > 0, "no operation ran into the close");
        file.close(); // again: still fine
    }

    /** Flags the workers poll. */
    private static final class RaceFlags {
        volatile boolean closed;
        volatile boolean stop;
    }
}

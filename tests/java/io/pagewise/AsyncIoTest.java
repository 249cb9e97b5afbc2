package io.pagewise;

import static io.pagewise.Fixtures.assertBytes;
import static java.nio.file.StandardOpenOption.CREATE_NEW;
import static java.nio.file.StandardOpenOption.READ;
import static java.nio.file.StandardOpenOption.WRITE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.Fixtures.BufferKind;
import io.pagewise.system.NativeIOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * readAsync and writeAsync: every cache mode and kind of buffer stores and returns the bytes, with
 * AsynchronousFileChannel's conventions (the count, -1 at end of file, the buffer's position moved when the future
 * completes), and fails with what the blocking call throws. On this machine they run on io_uring.
 */
@Timeout(60)
class AsyncIoTest {
    private static final int PIECES = 48;

    @TempDir
    Path dir;

    @Test
    void runsOnIoUringHere() {
        // The machines this suite runs on have Linux 6.x with io_uring allowed; elsewhere the path says why not.
        assertEquals("io_uring", Native.asyncPath(), "where asynchronous I/O runs");
    }

    @ParameterizedTest
    @EnumSource(CacheMode.class)
    void batchesOfEveryKindOfBufferRoundTrip(CacheMode mode) throws Exception {
        Path path = dir.resolve("data");
        Random random = new Random(mode.ordinal());
        byte[] expected = new byte[PIECES * 4096 + 1000];
        random.nextBytes(expected);
        try (StorageFile file = StorageFile.open(path, mode, CREATE_NEW, READ, WRITE)) {
            List<ByteBuffer> sources = new ArrayList<>();
            long[] offsets = new long[PIECES + 1];
            for (int i = 0; i <= PIECES; i++) {
                int length = i < PIECES ? 4096 : 1000;
                byte[] piece = java.util.Arrays.copyOfRange(expected, i * 4096, i * 4096 + length);
                sources.add(Fixtures.source(BufferKind.inTurn(i), piece));
                offsets[i] = i * 4096L;
            }
            List<CompletableFuture<Integer>> written = file.writeAsync(sources, offsets);
            for (int i = 0; i <= PIECES; i++) {
                assertEquals(i < PIECES ? 4096 : 1000, written.get(i).get(10, TimeUnit.SECONDS), "bytes written by piece " + i);
                assertEquals(sources.get(i).limit(), sources.get(i).position(), "piece " + i + " consumed");
            }
            assertEquals(expected.length, Files.size(path));

            List<ByteBuffer> targets = new ArrayList<>();
            for (int i = 0; i <= PIECES; i++) targets.add(Fixtures.empty(BufferKind.inTurn(i + 1), 4096));
            List<CompletableFuture<Integer>> read = file.readAsync(targets, offsets);
            byte[] back = new byte[expected.length];
            for (int i = 0; i <= PIECES; i++) {
                int n = read.get(i).get(10, TimeUnit.SECONDS);
                assertEquals(i < PIECES ? 4096 : 1000, n, "bytes read by piece " + i + " (the last one ends the file)");
                ByteBuffer target = targets.get(i);
                assertEquals(n, target.position() - (target.limit() - 4096), "position moved by the count");
                target.get(target.limit() - 4096, back, i * 4096, n);
            }
            assertBytes(expected, back, mode + " read back asynchronously");
            assertBytes(expected, Fixtures.read(file, 0, expected.length, BufferKind.HEAP), mode + " read back blocking");

            ByteBuffer past = ByteBuffer.allocate(10);
            assertEquals(-1, file.readAsync(past, expected.length + 5).get(10, TimeUnit.SECONDS), "read past the end");
            assertEquals(0, past.position());
            assertEquals(0, file.readAsync(ByteBuffer.allocate(0), 0).get(10, TimeUnit.SECONDS), "read without room");
        }
    }

    @Test
    void aFailedSystemCallFailsTheFutureWithWhatTheBlockingCallThrows() throws Exception {
        try (StorageFile file = StorageFile.open(dir.resolve("big"), CacheMode.WRITEBACK, CREATE_NEW, READ, WRITE)) {
            // Past ext4's largest file (16 TiB with 4 KiB blocks) and tmpfs's: EFBIG.
            long offset = 1L << 50;
            NativeIOException blocking = assertThrows(NativeIOException.class,
                    () -> file.write(ByteBuffer.allocateDirect(4096), offset));
            ExecutionException async = assertThrows(ExecutionException.class,
                    () -> file.writeAsync(ByteBuffer.allocateDirect(4096), offset).get(10, TimeUnit.SECONDS));
            NativeIOException failure = assertInstanceOf(NativeIOException.class, async.getCause());
            assertEquals(blocking.errnoName(), failure.errnoName());
            assertEquals(blocking.errno(), failure.errno());
            assertTrue(failure.getMessage().contains(dir.resolve("big").toString()), failure.getMessage());
            assertTrue(failure.getMessage().contains(Long.toString(offset)), failure.getMessage());
        }
    }

    @Test
    void aReadOnlyOrClosedFileFailsTheFuture() throws Exception {
        Path path = dir.resolve("small");
        Files.write(path, new byte[100]);
        StorageFile file = StorageFile.open(path, CacheMode.EVICT);
        ExecutionException readOnly = assertThrows(ExecutionException.class,
                () -> file.writeAsync(ByteBuffer.allocate(10), 0).get(10, TimeUnit.SECONDS));
        assertInstanceOf(AccessDeniedException.class, readOnly.getCause());
        file.close();
        ExecutionException closed = assertThrows(ExecutionException.class,
                () -> file.readAsync(ByteBuffer.allocate(10), 0).get(10, TimeUnit.SECONDS));
        assertInstanceOf(ClosedChannelException.class, closed.getCause());
    }

    @Test
    void badArgumentsAreRefusedAtTheCall() throws Exception {
        try (StorageFile file = StorageFile.open(dir.resolve("args"), CacheMode.DIRECT, CREATE_NEW, READ, WRITE)) {
            assertThrows(IllegalArgumentException.class, () -> file.readAsync(ByteBuffer.allocate(10), -1));
            assertThrows(IllegalArgumentException.class,
                    () -> file.readAsync(ByteBuffer.allocate(10).asReadOnlyBuffer(), 0));
            assertThrows(IllegalArgumentException.class,
                    () -> file.writeAsync(List.of(ByteBuffer.allocate(1)), new long[] {0, 1}));
        }
    }

    /** More requests than the ring holds at once: the submitter waits for room, and every one completes. */
    @Test
    void moreRequestsThanTheRingHolds() throws Exception {
        int count = 1000;
        try (StorageFile file = StorageFile.open(dir.resolve("many"), CacheMode.DIRECT, CREATE_NEW, READ, WRITE)) {
            List<ByteBuffer> sources = new ArrayList<>();
            long[] offsets = new long[count];
            for (int i = 0; i < count; i++) {
                ByteBuffer buffer = Fixtures.alignedDirect(4096);
                buffer.putInt(0, i);
                sources.add(buffer);
                offsets[i] = (long) (count - 1 - i) * 4096;
            }
            for (CompletableFuture<Integer> done : file.writeAsync(sources, offsets)) {
                assertEquals(4096, done.get(30, TimeUnit.SECONDS));
            }
            ByteBuffer one = Fixtures.alignedDirect(4096);
            for (int i = 0; i < count; i += 97) {
                one.clear();
                assertEquals(4096, file.readAsync(one, offsets[i]).get(10, TimeUnit.SECONDS));
                assertEquals(i, one.getInt(0), "block written by request " + i);
            }
        }
    }

    /**
     * A platform thread that joins its request reaps the ring itself: the completion's stages run on it, not on the
     * reaper thread (whose wake-up and hand-over cost two context switches a request). The first join may find the
     * reaper waiting in the kernel, which completes that one; from then on the waiting thread reaps.
     */
    @Test
    void aThreadThatJoinsItsRequestReapsTheRingItself() throws Exception {
        int count = 200;
        try (StorageFile file = StorageFile.open(dir.resolve("joined"), CacheMode.DIRECT, CREATE_NEW, READ, WRITE)) {
            ByteBuffer block = Fixtures.alignedDirect(4096);
            for (int i = 0; i < count; i++) file.write(block.clear(), (long) i * 4096);
            file.flush();
            Thread me = Thread.currentThread();
            int onMe = 0;
            for (int i = 0; i < count; i++) {
                Thread[] ranOn = new Thread[1];
                CompletableFuture<Integer> read = file.readAsync(block.clear(), (long) i * 4096);
                CompletableFuture<Integer> stage = read.whenComplete((n, e) -> ranOn[0] = Thread.currentThread());
                assertEquals(4096, read.join());
                stage.join();
                if (ranOn[0] == me) onMe++;
            }
            assertTrue(onMe >= count * 3 / 4, onMe + " of " + count + " completions handed on by the joining thread");
        }
    }

    /**
     * Threads that join, a virtual thread's blocking reads (which park), and requests that nobody joins (completed
     * by the reaper thread, which must come back once the joining stops) all complete, together and afterwards.
     */
    @Test
    void joinersAndTheReaperShareTheRing() throws Exception {
        int perThread = 300;
        try (StorageFile file = StorageFile.open(dir.resolve("shared"), CacheMode.DIRECT, CREATE_NEW, READ, WRITE)) {
            ByteBuffer fill = Fixtures.alignedDirect(4096);
            for (int i = 0; i < 64; i++) {
                fill.clear().putInt(0, i);
                file.write(fill, (long) i * 4096);
            }
            List<Thread> threads = new ArrayList<>();
            List<Throwable> failures = java.util.Collections.synchronizedList(new ArrayList<>());
            java.util.concurrent.atomic.AtomicInteger unjoined = new java.util.concurrent.atomic.AtomicInteger();
            for (int t = 0; t < 4; t++) {
                int seed = t;
                threads.add(new Thread(() -> {
                    try {
                        ByteBuffer buffer = Fixtures.alignedDirect(4096);
                        ByteBuffer spare = Fixtures.alignedDirect(4096);
                        Random random = new Random(seed);
                        for (int i = 0; i < perThread; i++) {
                            int block = random.nextInt(64);
                            // One request in three left to the reaper, completing into a counter.
                            if (i % 3 == 0) file.readAsync(spare.clear(), (long) random.nextInt(64) * 4096)
                                    .thenRun(unjoined::incrementAndGet).get(10, TimeUnit.SECONDS);
                            assertEquals(4096, file.readAsync(buffer.clear(), (long) block * 4096).join());
                            assertEquals(block, buffer.getInt(0));
                        }
                    } catch (Throwable e) {
                        failures.add(e);
                    }
                }));
            }
            Runnable blockingReads = () -> {
                try {
                    ByteBuffer buffer = Fixtures.alignedDirect(4096);
                    for (int i = 0; i < perThread; i++) {
                        assertEquals(4096, file.read(buffer.clear(), (long) (i % 64) * 4096));
                        assertEquals(i % 64, buffer.getInt(0));
                    }
                } catch (Throwable e) {
                    failures.add(e);
                }
            };
            // On JDK 21 and later, a virtual thread's blocking reads go on the ring and park (JDK 17 has none).
            try {
                Object builder = Thread.class.getMethod("ofVirtual").invoke(null);
                threads.add((Thread) Class.forName("java.lang.Thread$Builder").getMethod("unstarted", Runnable.class)
                        .invoke(builder, blockingReads));
            } catch (NoSuchMethodException before21) {
                threads.add(new Thread(blockingReads));
            }
            for (Thread thread : threads) thread.start();
            for (Thread thread : threads) thread.join(TimeUnit.SECONDS.toMillis(45));
            for (Thread thread : threads) assertTrue(!thread.isAlive(), thread + " still waiting");
            assertTrue(failures.isEmpty(), failures.toString());
            assertEquals(4 * perThread / 3, unjoined.get());
            // Nobody joins now: the reaper thread completes these on its own.
            ByteBuffer last = Fixtures.alignedDirect(4096);
            for (int i = 0; i < 20; i++) {
                assertEquals(4096, file.readAsync(last.clear(), (long) i * 4096).get(5, TimeUnit.SECONDS));
                assertEquals(i, last.getInt(0));
            }
        }
    }

    /**
     * Stages that submit (run on the thread that reaped, whose submissions go to the ring together once it has handed
     * its completions on): a chain of requests each started by the previous one's stage, and a stage that submits and
     * then joins, whose request must reach the ring before it waits.
     */
    @Test
    void stagesMaySubmitAndJoinRequests() throws Exception {
        try (StorageFile file = StorageFile.open(dir.resolve("stages"), CacheMode.DIRECT, CREATE_NEW, READ, WRITE)) {
            ByteBuffer fill = Fixtures.alignedDirect(4096);
            for (int i = 0; i < 16; i++) file.write(fill.clear().putInt(0, i), (long) i * 4096);
            ByteBuffer outer = Fixtures.alignedDirect(4096);
            ByteBuffer inner = Fixtures.alignedDirect(4096);
            CompletableFuture<Integer> nested = file.readAsync(outer, 0)
                    .thenApply(n -> file.readAsync(inner.clear(), 5 * 4096).join());
            assertEquals(4096, nested.get(10, TimeUnit.SECONDS));
            assertEquals(5, inner.getInt(0));

            int chained = 200;
            CompletableFuture<Integer> last = new CompletableFuture<>();
            java.util.concurrent.atomic.AtomicInteger count = new java.util.concurrent.atomic.AtomicInteger();
            Runnable[] next = new Runnable[1];
            ByteBuffer buffer = Fixtures.alignedDirect(4096);
            next[0] = () -> file.readAsync(buffer.clear(), (long) (count.get() % 16) * 4096).whenComplete((n, e) -> {
                if (e != null) {
                    last.completeExceptionally(e);
                } else if (buffer.getInt(0) != count.get() % 16) {
                    last.completeExceptionally(new AssertionError("block " + count.get() % 16 + " read " + buffer.getInt(0)));
                } else if (count.incrementAndGet() == chained) {
                    last.complete(n);
                } else {
                    next[0].run();
                }
            });
            next[0].run();
            assertEquals(4096, last.get(20, TimeUnit.SECONDS));
            assertEquals(chained, count.get());
        }
    }
}

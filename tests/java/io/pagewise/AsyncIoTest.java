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
}

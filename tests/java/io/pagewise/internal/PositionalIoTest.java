package io.pagewise.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.testing.ExternalTools;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The native scatter/gather calls themselves: C checks every buffer's range whatever Java passes, a read stops at
 * end of file, and positions move by exactly the bytes each buffer took.
 */
class PositionalIoTest {
    private static final int EBADF = 9; // Linux, every architecture
    @TempDir
    Path dir;

    @BeforeEach
    void nativeLibrary() {
        ExternalTools.requireNativeLibrary();
    }

    private interface WithDescriptor {
        void run(int fd) throws Exception;
    }

    /** Writes {@code content} to {@code path}, opens it with {@code flags}, runs {@code body} and closes it. */
    private static void withOpenFile(Path path, byte[] content, int flags, WithDescriptor body) throws Exception {
        Files.write(path, content);
        int fd = FileDescriptors.open(path, flags);
        assertTrue(fd >= 0);
        try {
            body.run(fd);
        } finally {
            FileDescriptors.close(fd);
        }
    }

    private static long preadv0(int fd, ByteBuffer[] buffers, int[] positions, int[] lengths, int count, long offset)
            throws Exception {
        return preadv0(fd, buffers, positions, lengths, count, offset, 0);
    }

    private static long preadv0(int fd, ByteBuffer[] buffers, int[] positions, int[] lengths, int count, long offset,
                                int flags) throws Exception {
        Method m = PositionalIoBinding.class.getDeclaredMethod("preadv0", int.class, ByteBuffer[].class, int[].class,
                int[].class, int.class, long.class, int.class, long[].class);
        m.setAccessible(true);
        return (long) m.invoke(null, fd, buffers, positions, lengths, count, offset, flags, null);
    }

    @Test
    @Tag("jni")
    void cChecksEveryBufferRangeTheCountAndTheFlags() throws Exception {
        Path path = dir.resolve("bounds");
        withOpenFile(path, new byte[8192], 0, fd -> {
            ByteBuffer ok = ByteBuffer.allocateDirect(100);
            ByteBuffer[] two = {ok, ByteBuffer.allocateDirect(100)};
            assertEquals(-Errno.EFAULT, preadv0(fd, two, new int[] {0, 50}, new int[] {100, 51}, 2, 0), "past capacity");
            assertEquals(-Errno.EFAULT, preadv0(fd, two, new int[] {0, -1}, new int[] {100, 10}, 2, 0), "negative position");
            assertEquals(-Errno.EFAULT, preadv0(fd, two, new int[] {0, 0}, new int[] {100, -1}, 2, 0), "negative length");
            ByteBuffer[] heap = {ok, ByteBuffer.allocate(100)};
            assertEquals(-Errno.EFAULT, preadv0(fd, heap, new int[] {0, 0}, new int[] {100, 100}, 2, 0), "heap buffer");
            ByteBuffer[] withNull = {ok, null};
            assertEquals(-Errno.EFAULT, preadv0(fd, withNull, new int[] {0, 0}, new int[] {100, 100}, 2, 0), "null buffer");
            assertEquals(-Errno.EINVAL, preadv0(fd, two, new int[] {0, 0}, new int[] {100, 100}, 3, 0), "count > arrays");
            assertEquals(-Errno.EINVAL, preadv0(fd, two, new int[] {0, 0}, new int[] {100, 100}, -1, 0), "negative count");
            assertEquals(-Errno.EINVAL, preadv0(fd, two, new int[] {0, 0}, new int[] {100, 100}, 2, -1), "negative offset");
            assertEquals(-Errno.EINVAL, preadv0(fd, two, new int[] {0, 0}, new int[] {100, 100}, 2, 0, PositionalIo.AIO),
                    "an AIO read, which Java refuses too");
            assertEquals(200, preadv0(fd, two, new int[] {0, 0}, new int[] {100, 100}, 2, 0), "in bounds");
        });
    }

    @Test
    void readStopsAtEndOfFileAndMovesEachPositionByWhatItTook() throws Exception {
        Path path = dir.resolve("eof");
        byte[] data = new byte[1000];
        new Random(1).nextBytes(data);
        withOpenFile(path, data, 0, fd -> {
            ByteBuffer[] dsts = {ByteBuffer.allocateDirect(600), ByteBuffer.allocateDirect(600), ByteBuffer.allocateDirect(10)};
            assertEquals(1000, PositionalIo.read(fd, IoVector.of(dsts, 0), 0, null));
            assertEquals(600, dsts[0].position());
            assertEquals(400, dsts[1].position());
            assertEquals(0, dsts[2].position());
            byte[] got = new byte[1000];
            dsts[0].get(0, got, 0, 600);
            dsts[1].get(0, got, 600, 400);
            assertArrayEquals(data, got);
            assertEquals(0, PositionalIo.read(fd, IoVector.of(new ByteBuffer[] {ByteBuffer.allocateDirect(10)}, 1000), 0, null), "at EOF");
        });
    }

    @Test
    void heapBuffersAreRefusedBeforeTheNativeCall() throws Exception {
        // pread0/pwrite0 read a buffer's address field without checking its class: this check is what keeps a heap
        // buffer's array offset from being taken for an address.
        Path path = dir.resolve("heap");
        withOpenFile(path, new byte[100], 0, fd -> {
            ByteBuffer heap = ByteBuffer.allocate(100);
            assertThrows(IllegalArgumentException.class, () -> PositionalIo.read(fd, IoVector.of(heap, 0), 0, null), "read");
            assertThrows(IllegalArgumentException.class, () -> PositionalIo.write(fd, IoVector.of(heap, 0), 0, null), "write");
            assertThrows(IllegalArgumentException.class,
                    () -> PositionalIo.read(fd, IoVector.of(new ByteBuffer[] {heap}, 0), 0, null), "read of one in an array");
            assertEquals(0, heap.position());
        });
    }

    @Test
    void aioWriteOfAVectorLongerThanIovMaxIsOneIoSubmitPerBatch() throws Exception {
        Path path = dir.resolve("aio");
        withOpenFile(path, new byte[0], FileDescriptors.READ_WRITE, fd -> {
            int count = 1500; // IOV_MAX is 1024: two batches
            ByteBuffer[] srcs = new ByteBuffer[count];
            byte[] expected = new byte[count * 3];
            for (int i = 0; i < count; i++) {
                byte[] three = {(byte) i, (byte) (i >> 8), (byte) 7};
                System.arraycopy(three, 0, expected, i * 3, 3);
                srcs[i] = ByteBuffer.allocateDirect(3).put(three).flip();
            }
            long[] asked = new long[PositionalIo.ASKED_FIELDS];
            assertEquals(expected.length, PositionalIo.write(fd, IoVector.of(srcs, 100), PositionalIo.AIO, asked));
            assertEquals(2, asked[PositionalIo.ASKED_AIO_WRITES], "one io_submit per IOV_MAX batch");
            for (ByteBuffer src : srcs) assertEquals(3, src.position());
            assertArrayEquals(expected, Arrays.copyOfRange(Files.readAllBytes(path), 100, 100 + expected.length));
        });
    }

    @Test
    void aioWriteThatIoSubmitRefusesFallsBackAndReportsTheRealError() throws Exception {
        Path path = dir.resolve("read-only");
        withOpenFile(path, new byte[100], 0, fd -> { // io_submit refuses a write on a read-only descriptor (EBADF)
            long[] asked = {-1, -1, -1, -1, -1};
            ByteBuffer src = ByteBuffer.allocateDirect(10);
            assertEquals(-EBADF, PositionalIo.write(fd, IoVector.of(new ByteBuffer[] {src}, 0), PositionalIo.AIO, asked));
            assertEquals(0, asked[PositionalIo.ASKED_AIO_WRITES], "nothing went by io_submit");
            assertEquals(0, src.position());
        });
    }

    @Test
    @Tag("jni")
    void cChecksTheSingleBuffersRangeToo() throws Exception {
        Path path = dir.resolve("bounds-one");
        withOpenFile(path, new byte[8192], 0, fd -> {
            Method m = PositionalIoBinding.class.getDeclaredMethod("pread0", int.class, ByteBuffer.class, int.class,
                    int.class, long.class, int.class, long[].class);
            m.setAccessible(true);
            ByteBuffer ok = ByteBuffer.allocateDirect(100);
            assertEquals(-(long) Errno.EFAULT, m.invoke(null, fd, ok, 50, 51, 0L, 0, null), "past capacity");
            assertEquals(-(long) Errno.EFAULT, m.invoke(null, fd, ok, -1, 10, 0L, 0, null), "negative position");
            assertEquals(-(long) Errno.EFAULT, m.invoke(null, fd, ok, 0, -1, 0L, 0, null), "negative length");
            // transferOne refuses heap buffers before the call; C still refuses one whose "address" is an array offset.
            assertEquals(-(long) Errno.EFAULT, m.invoke(null, fd, ByteBuffer.allocate(100), 0, 100, 0L, 0, null), "heap");
            assertEquals(-(long) Errno.EFAULT, m.invoke(null, fd, null, 0, 100, 0L, 0, null), "null buffer");
            assertEquals(-(long) Errno.EINVAL, m.invoke(null, fd, ok, 0, 100, -1L, 0, null), "negative offset");
            assertEquals(-(long) Errno.EINVAL, m.invoke(null, fd, ok, 0, 100, 0L, PositionalIo.AIO, null), "AIO read");
            assertEquals(-(long) Errno.EINVAL, m.invoke(null, fd, ok, 0, 100, 0L, 0, new long[1]), "short asked");
            assertEquals(-(long) Errno.EOVERFLOW, m.invoke(null, fd, ok, 0, 100, Long.MAX_VALUE - 10, 0, null),
                    "end past Long.MAX_VALUE");
            assertEquals(100L, m.invoke(null, fd, ok, 0, 100, 0L, 0, null), "in bounds");
        });
    }

    @Test
    void aioIsForWritesOnly() throws Exception {
        Path path = dir.resolve("aio-read");
        withOpenFile(path, new byte[100], 0, fd -> {
            ByteBuffer[] dst = {ByteBuffer.allocateDirect(10)};
            assertThrows(IllegalArgumentException.class, () -> PositionalIo.read(fd, IoVector.of(dst, 0), PositionalIo.AIO, null));
        });
    }
}

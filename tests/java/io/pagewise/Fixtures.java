package io.pagewise;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.testing.ExternalTools;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/** Shared test helpers: random data, buffers of every kind, and an in-memory model of a file's expected bytes. */
final class Fixtures {
    private Fixtures() {}

    /** The kinds of buffer callers hand to StorageFile; each takes a different path through the library. */
    enum BufferKind {
        /** A plain heap array. */
        HEAP,
        /** A heap buffer whose backing array starts at a non-zero array offset. */
        HEAP_SLICE,
        /** A direct buffer whose position is page aligned (the O_DIRECT zero-copy path when offset/length align). */
        DIRECT,
        /** A direct buffer whose position is at an odd address (needs a bounce buffer under O_DIRECT). */
        DIRECT_UNALIGNED;

        /** {@return the i-th kind of all the kinds taken in turn}, for a test that cycles through them */
        static BufferKind inTurn(int i) {
            return values()[i % values().length];
        }
    }

    static byte[] random(long seed, int length) {
        return io.pagewise.testing.TestData.random(seed, length);
    }

    /** A buffer of the given kind whose remaining bytes are exactly data. */
    static ByteBuffer source(BufferKind kind, byte[] data) {
        ByteBuffer buffer = empty(kind, data.length);
        int start = buffer.position();
        buffer.put(data);
        return buffer.position(start);
    }

    /** A buffer of the given kind with exactly length bytes remaining, filled with the sentinel 0x5A. */
    static ByteBuffer empty(BufferKind kind, int length) {
        ByteBuffer buffer;
        switch (kind) {
            case HEAP:
                buffer = ByteBuffer.allocate(length);
                break;
            case HEAP_SLICE:
                buffer = ByteBuffer.wrap(new byte[length + 13], 13, length).slice();
                break;
            case DIRECT:
                buffer = alignedDirect(length).limit(length);
                break;
            case DIRECT_UNALIGNED:
                buffer = alignedDirect(length + 4093).position(4093).limit(4093 + length);
                break;
            default:
                throw new AssertionError(kind);
        }
        for (int i = buffer.position(); i < buffer.limit(); i++) buffer.put(i, (byte) 0x5A);
        return buffer;
    }

    /**
     * A file that exists and that this process may not open for writing (EACCES): a file of dir without
     * permissions, unless root may open it anyway, else a read-only sysfs attribute, which root cannot write either
     * (unless sysfs is mounted read-only, which gives EROFS). The JDK decides which one refuses; skips (fails on CI)
     * when none does.
     */
    static Path deniedForWriting(Path dir) throws IOException {
        Path locked = dir.resolve("no-permissions");
        Files.write(locked, new byte[] {1});
        Files.setPosixFilePermissions(locked, Set.of());
        for (Path candidate : List.of(locked, Path.of("/sys/devices/system/cpu/online"),
                Path.of("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size"))) {
            try (FileChannel opened = FileChannel.open(candidate, StandardOpenOption.WRITE)) {
                // root may write it: try the next one
            } catch (AccessDeniedException e) {
                return candidate;
            } catch (IOException e) {
                // missing, or another error: try the next one
            }
        }
        ExternalTools.unavailable("no file here refuses opening for writing with EACCES",
                "AccessDeniedException on open must be tested");
        return null;
    }

    /** A page-aligned direct buffer of at least length bytes (alignedSlice rounds both ends, so over-allocate). */
    static ByteBuffer alignedDirect(int length) {
        int rounded = (length + 4095) / 4096 * 4096;
        ByteBuffer buffer = ByteBuffer.allocateDirect(rounded + 4096).alignedSlice(4096);
        return buffer.limit(rounded).slice();
    }

    /** Writes all of data at offset through a buffer of the given kind and checks the buffer was consumed. */
    static void write(StorageFile file, long offset, byte[] data, BufferKind kind) throws IOException {
        write(file, offset, data, kind, false);
    }

    static void write(StorageFile file, long offset, byte[] data, BufferKind kind, boolean fua) throws IOException {
        ByteBuffer buffer = source(kind, data);
        int start = buffer.position();
        file.write(buffer, offset, fua);
        assertEquals(start + data.length, buffer.position(), "write must advance the buffer by its length");
        assertEquals(buffer.limit(), buffer.position(), "write must consume the whole buffer");
    }

    /**
     * Reads up to length bytes at offset through a buffer of the given kind; checks FileChannel's conventions (the
     * buffer advanced by the count returned, -1 and not 0 when nothing was read into a buffer with room) and that
     * nothing past that count was touched. Returns the bytes read: none at or past the end of the file.
     */
    static byte[] read(StorageFile file, long offset, int length, BufferKind kind) throws IOException {
        ByteBuffer buffer = empty(kind, length);
        int start = buffer.position();
        int n = file.read(buffer, offset);
        if (length > 0) {
            assertTrue(n == -1 || n > 0, "a read with room returns -1 at end of file, never " + n);
        } else {
            assertEquals(0, n, "a read without room returns 0");
        }
        if (n == -1) {
            assertTrue(offset >= file.size(), "-1 at " + offset + ", inside the file of " + file.size() + " bytes");
            n = 0;
        }
        assertEquals(start + n, buffer.position(), "read must advance the buffer by the count it returns");
        for (int i = buffer.position(); i < buffer.limit(); i++) {
            if (buffer.get(i) != 0x5A) throw new AssertionError("read wrote past its count at buffer index " + i);
        }
        byte[] out = new byte[n];
        buffer.get(start, out);
        return out;
    }

    /** Reads [offset, offset + length) with a heap buffer, requiring a full read. */
    static byte[] readFully(StorageFile file, long offset, int length) throws IOException {
        byte[] out = read(file, offset, length, BufferKind.HEAP);
        assertEquals(length, out.length, "short read inside the file at " + offset);
        return out;
    }

    /** Asserts two byte arrays are equal, reporting the first differing index instead of a huge dump. */
    static void assertBytes(byte[] expected, byte[] actual, String what) {
        int mismatch = Arrays.mismatch(expected, actual);
        if (mismatch >= 0) {
            throw new AssertionError(what + ": first difference at byte " + mismatch + " (expected length "
                    + expected.length + ", actual " + actual.length + ")"
                    + (mismatch < Math.min(expected.length, actual.length)
                    ? ", expected " + expected[mismatch] + " but was " + actual[mismatch] : ""));
        }
    }

    /** What a file should contain: a growable byte array that writes, zeroing and resizing are applied to. */
    static final class Model {
        private byte[] bytes = new byte[0];
        private int size;

        int size() {
            return size;
        }

        void write(long offset, byte[] data) {
            int end = Math.toIntExact(offset + data.length);
            grow(end);
            System.arraycopy(data, 0, bytes, (int) offset, data.length);
            size = Math.max(size, end);
        }

        /**
         * Writes length bytes drawn from random to file at offset, through a buffer of kind and with FUA or
         * without, and the same bytes here; checks that the file's size is then the model's.
         * {@return the bytes written}
         */
        byte[] writeRandom(StorageFile file, Random random, long offset, int length, BufferKind kind, boolean fua)
                throws IOException {
            byte[] data = Fixtures.random(random.nextLong(), length);
            Fixtures.write(file, offset, data, kind, fua);
            write(offset, data);
            assertEquals(size, file.size(), "size after writing " + length + " bytes at " + offset);
            return data;
        }

        /** Zeros [offset, offset + length); grows the file only when grows is set. */
        void zero(long offset, long length, boolean grows) {
            int end = Math.toIntExact(offset + length);
            if (grows) {
                grow(end);
                size = Math.max(size, end);
            }
            Arrays.fill(bytes, (int) Math.min(offset, size), Math.min(end, size), (byte) 0);
        }

        void resize(long newSize) {
            int n = Math.toIntExact(newSize);
            grow(n);
            if (n < size) Arrays.fill(bytes, n, size, (byte) 0);
            size = n;
        }

        byte[] bytes() {
            return Arrays.copyOf(bytes, size);
        }

        /** The bytes a read of [offset, offset + length) should return: short at end of file, empty past it. */
        byte[] slice(long offset, int length) {
            if (offset >= size) return new byte[0];
            return Arrays.copyOfRange(bytes, (int) offset, (int) Math.min(size, offset + length));
        }

        private void grow(int end) {
            if (end > bytes.length) bytes = Arrays.copyOf(bytes, Math.max(end, bytes.length * 2));
        }
    }

    /**
     * Writes the pieces ({offset, length} of expected) from threads at once: piece i belongs to thread i % threads,
     * each thread writes its pieces in shuffled order, cycling buffer kinds, with FUA on every 17th when asked.
     */
    static void writeConcurrently(StorageFile file, byte[] expected, int threads, boolean someFua, List<int[]> pieces)
            throws Exception {
        List<List<int[]>> owned = new ArrayList<>();
        for (int t = 0; t < threads; t++) owned.add(new ArrayList<>());
        for (int i = 0; i < pieces.size(); i++) owned.get(i % threads).add(pieces.get(i)); // neighbours differ
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            CyclicBarrier start = new CyclicBarrier(threads);
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                List<int[]> mine = owned.get(t);
                Collections.shuffle(mine, new Random(t));
                int id = t;
                done.add(pool.submit(() -> {
                    start.await();
                    int i = 0;
                    for (int[] piece : mine) {
                        byte[] data = Arrays.copyOfRange(expected, piece[0], piece[0] + piece[1]);
                        Fixtures.write(file, piece[0], data, BufferKind.inTurn(id + i++), someFua && i % 17 == 0);
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) f.get();
        } finally {
            pool.shutdownNow();
        }
    }
}

package io.pagewise;

import static io.pagewise.Fixtures.assertBytes;
import static java.nio.file.StandardOpenOption.CREATE_NEW;
import static java.nio.file.StandardOpenOption.READ;
import static java.nio.file.StandardOpenOption.WRITE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.pagewise.internal.BufferPool;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Scatter/gather reads and writes of a whole request: bytes land in order across the buffers whatever their kind,
 * every buffer's position moves by what it took, a read stops at end of file (-1 at or past it), and O_DIRECT
 * bounces the whole request when any one buffer is unaligned.
 */
@Timeout(60)
class VectoredIoTest {
    private static final int BLOCK = BufferPool.ALIGNMENT;

    @TempDir
    Path dir;

    /** Buffers of every kind and of odd sizes: aligned direct, heap, an unaligned direct slice, an empty one. */
    private static ByteBuffer[] mixed(int... sizes) {
        List<ByteBuffer> buffers = new ArrayList<>();
        for (int i = 0; i < sizes.length; i++) {
            switch (i % 4) {
                case 0: buffers.add(BufferPool.aligned(sizes[i])); break;
                case 1: buffers.add(ByteBuffer.allocate(sizes[i])); break;
                case 2: buffers.add(ByteBuffer.allocateDirect(sizes[i] + 1).position(1).slice()); break;
                default: buffers.add(ByteBuffer.allocateDirect(sizes[i])); break;
            }
        }
        return buffers.toArray(new ByteBuffer[0]);
    }

    private static byte[] concat(ByteBuffer[] buffers) {
        int total = 0;
        for (ByteBuffer b : buffers) total += b.limit();
        byte[] all = new byte[total];
        int at = 0;
        for (ByteBuffer b : buffers) {
            b.get(0, all, at, b.limit());
            at += b.limit();
        }
        return all;
    }

    @ParameterizedTest
    @EnumSource(CacheMode.class)
    void mixedBuffersRoundTripAtAnUnalignedOffset(CacheMode mode) throws Exception {
        Path path = dir.resolve("mixed");
        byte[] data = Fixtures.random(7, 3 * BLOCK + 100 + 777 + 5000);
        try (StorageFile file = StorageFile.open(path, mode, CREATE_NEW, READ, WRITE)) {
            ByteBuffer[] srcs = mixed(3 * BLOCK, 100, 777, 0, 5000);
            int at = 0;
            for (ByteBuffer src : srcs) {
                src.put(0, data, at, src.remaining());
                at += src.remaining();
            }
            assertEquals(data.length, file.write(srcs, 1000, true));
            for (ByteBuffer src : srcs) assertEquals(0, src.remaining(), "every buffer was written out");

            ByteBuffer[] dsts = mixed(5000, 0, BLOCK, 1, data.length - 5001 - BLOCK + 300);
            assertEquals(data.length, file.read(dsts, 1000), "short only at end of file");
            assertEquals(300, dsts[4].remaining(), "the last buffer reaches 300 bytes past the end of file");
            assertBytes(data, java.util.Arrays.copyOf(concat(dsts), data.length), mode + " content");
            assertEquals(-1, file.read(mixed(10, 10), 1000 + data.length), "at end of file");
            assertEquals(0, file.read(new ByteBuffer[] {ByteBuffer.allocate(0)}, 1000 + data.length), "nothing asked");
        }
        byte[] expected = new byte[1000 + data.length];
        System.arraycopy(data, 0, expected, 1000, data.length);
        assertBytes(expected, Files.readAllBytes(path), mode + " file");
    }

    /**
     * O_DIRECT takes a vector only when every buffer is aligned in address and length: an aligned request whose
     * second buffer is not (odd address, or a length that is no multiple of the block) is bounced whole.
     */
    @ParameterizedTest
    @EnumSource(value = CacheMode.class, names = {"DIRECT", "DIRECTSYNC"})
    void directBouncesTheWholeVectorWhenOneBufferIsUnaligned(CacheMode mode) throws Exception {
        Path path = dir.resolve("direct-vector");
        byte[] data = Fixtures.random(9, 4 * BLOCK);
        try (StorageFile file = StorageFile.open(path, mode, CREATE_NEW, READ, WRITE)) {
            ByteBuffer oddAddress = ByteBuffer.allocateDirect(BLOCK + 1).position(1).slice();
            ByteBuffer[] srcs = {BufferPool.aligned(BLOCK), oddAddress, BufferPool.aligned(100), BufferPool.aligned(BLOCK - 100),
                    BufferPool.aligned(BLOCK)};
            int at = 0;
            for (ByteBuffer src : srcs) {
                src.put(0, data, at, src.remaining());
                at += src.remaining();
            }
            assertEquals(data.length, file.write(srcs, 0));
            ByteBuffer[] dsts = {BufferPool.aligned(BLOCK), ByteBuffer.allocateDirect(BLOCK + 1).position(1).slice(),
                    BufferPool.aligned(100), BufferPool.aligned(BLOCK - 100), BufferPool.aligned(BLOCK)};
            assertEquals(data.length, file.read(dsts, 0));
            assertBytes(data, concat(dsts), mode + " content");
        }
        assertBytes(data, Files.readAllBytes(path), mode + " file");
    }

    /** More buffers than IOV_MAX (1024): C splits the vector over several calls and retries what is left. */
    @ParameterizedTest
    @EnumSource(value = CacheMode.class, names = {"WRITEBACK", "DIRECT", "DONTCACHE"})
    void moreBuffersThanIovMax(CacheMode mode) throws Exception {
        Path path = dir.resolve("iovmax");
        int count = 2500;
        byte[] data = Fixtures.random(8, count * BLOCK);
        try (StorageFile file = StorageFile.open(path, mode, CREATE_NEW, READ, WRITE)) {
            ByteBuffer[] srcs = new ByteBuffer[count];
            for (int i = 0; i < count; i++) srcs[i] = BufferPool.aligned(BLOCK).put(0, data, i * BLOCK, BLOCK);
            assertEquals(data.length, file.write(srcs, 0));
            ByteBuffer[] dsts = new ByteBuffer[count];
            for (int i = 0; i < count; i++) dsts[i] = BufferPool.aligned(BLOCK);
            assertEquals(data.length, file.read(dsts, 0));
            assertBytes(data, concat(dsts), "content");
            assertEquals(1, file.stats().writes(), "one write call for the whole vector");
            assertEquals(1, file.stats().reads(), "one read call for the whole vector");
        }
    }

    @ParameterizedTest
    @EnumSource(value = CacheMode.class, names = {"WRITEBACK", "DIRECT"})
    void readOnlyBufferAnywhereInTheVectorIsRefusedBeforeAnyIo(CacheMode mode) throws Exception {
        Path path = dir.resolve("readonly");
        Files.write(path, new byte[8192]);
        try (StorageFile file = StorageFile.open(path, mode, READ)) {
            ByteBuffer first = ByteBuffer.allocateDirect(4096);
            ByteBuffer[] dsts = {first, ByteBuffer.allocateDirect(4096).asReadOnlyBuffer()};
            assertThrows(IllegalArgumentException.class, () -> file.read(dsts, 0));
            assertEquals(0, first.position(), "nothing was read");
            assertEquals(0, file.stats().reads());
        }
    }
}

package io.pagewise.copy;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.CacheMode;
import io.pagewise.Extent;
import io.pagewise.StorageFile;
import io.pagewise.backends.FileDevice;
import io.pagewise.backends.MemoryDevice;
import io.pagewise.backends.SyntheticDevices;
import io.pagewise.device.BlockDevice;
import io.pagewise.device.Capability;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.Pipe;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** {@link StreamCopier} through real pipes: device to stream, stream to device and to a growing file. */
@Timeout(60)
class StreamCopierTest {
    private static final int MiB = 1 << 20;

    @TempDir
    Path dir;

    /** Random data with runs of zeros: whole 4 KiB blocks, a 1 MiB run, and zeros at the end. */
    private static byte[] input(int length, long seed) {
        byte[] data = new byte[length];
        new Random(seed).nextBytes(data);
        Arrays.fill(data, 8192, 16384, (byte) 0);
        Arrays.fill(data, MiB, 2 * MiB, (byte) 0);
        Arrays.fill(data, length - 100_000, length, (byte) 0);
        return data;
    }

    /** Writes data into a pipe from another thread; the copy reads the pipe's other end. */
    private static CompletableFuture<Void> feed(Pipe pipe, byte[] data) {
        return CompletableFuture.runAsync(() -> {
            try (Pipe.SinkChannel sink = pipe.sink()) {
                ByteBuffer buffer = ByteBuffer.wrap(data);
                // Odd-sized writes, so that reads return short counts in the middle of requests.
                while (buffer.hasRemaining()) {
                    ByteBuffer piece = buffer.duplicate().limit(Math.min(buffer.limit(), buffer.position() + 77_777));
                    buffer.position(buffer.position() + sink.write(piece));
                }
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
        });
    }

    private static byte[] contents(BlockDevice device, int length) throws IOException {
        ByteBuffer buffer = ByteBuffer.allocate(length);
        device.readFully(buffer, 0);
        return buffer.array();
    }

    @Test
    void aDeviceWithHolesGoesToAStreamInOrderWithTheHolesAsZeros() throws Exception {
        Path file = dir.resolve("sparse.img");
        byte[] expected = new byte[8 * MiB];
        Random random = new Random(3);
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
            raf.setLength(expected.length);
            for (int at : new int[] {0, 3 * MiB + 4096, 8 * MiB - 65536}) {
                byte[] island = new byte[65536];
                random.nextBytes(island);
                raf.seek(at);
                raf.write(island);
                System.arraycopy(island, 0, expected, at, island.length);
            }
        }
        Pipe pipe = Pipe.open();
        CompletableFuture<byte[]> read = CompletableFuture.supplyAsync(() -> {
            try (var in = Channels.newInputStream(pipe.source())) {
                return in.readAllBytes();
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
        });
        CopyResult result;
        try (BlockDevice source = FileDevice.open(file, CacheMode.WRITEBACK); Pipe.SinkChannel out = pipe.sink()) {
            assertTrue(source.capabilities().asSet().containsAll(Set.of(Capability.EXTENTS, Capability.HOLES)),
                    "the test needs a file with holes");
            result = new StreamCopier(new CopyOptions().requestSize(64 * 1024)).copy(source, out);
        }
        assertArrayEquals(expected, read.get());
        assertEquals(expected.length, result.size());
        assertEquals(3 * 65536, result.dataBytes(), "only the data was read");
        assertEquals(expected.length - 3 * 65536, result.zeroedBytes(), "the holes were written as zeros");
    }

    @Test
    void aStreamFillsTheStartOfADeviceAndLeavesTheRestAsItWas() throws Exception {
        byte[] data = input(3 * MiB + 1000, 5);
        MemoryDevice device = filledDevice(4 * MiB, (byte) 0x5a);
        Pipe pipe = Pipe.open();
        CompletableFuture<Void> fed = feed(pipe, data);
        List<Long> totals = new ArrayList<>();
        CopyResult result;
        try (Pipe.SourceChannel in = pipe.source()) {
            result = new StreamCopier(new CopyOptions().progress((done, total) -> totals.add(total))).copy(in, device);
        }
        fed.get();
        byte[] after = contents(device, 4 * MiB);
        assertArrayEquals(data, Arrays.copyOf(after, data.length), "the stream's bytes, zero runs included");
        for (int i = data.length; i < after.length; i++) assertEquals(0x5a, after[i], "byte " + i + " past the stream");
        assertEquals(data.length, result.size());
        assertTrue(result.zeroedBytes() >= MiB + 8192, "zero blocks were zeroed, not written: " + result);
        assertEquals(-1L, totals.get(0), "the total is unknown while the stream runs");
        assertEquals((long) data.length, totals.get(totals.size() - 1), "the last call says the length");
    }

    @Test
    void aStreamLongerThanTheDeviceFailsAtTheDevicesSizeWithItsStartWritten() throws Exception {
        byte[] data = input(3 * MiB, 6);
        MemoryDevice device = new MemoryDevice(2 * MiB + 4096);
        Pipe pipe = Pipe.open();
        CompletableFuture<Void> fed = feed(pipe, data);
        CopyException e;
        try (Pipe.SourceChannel in = pipe.source()) {
            e = assertThrows(CopyException.class, () -> new StreamCopier(new CopyOptions()).copy(in, device));
        }
        assertEquals(2 * MiB + 4096, e.offset());
        assertTrue(e.getMessage().contains("(2101248 bytes) is smaller than the input"), e.getMessage());
        assertArrayEquals(Arrays.copyOf(data, 2 * MiB + 4096), contents(device, 2 * MiB + 4096));
        fed.cancel(true);
    }

    @Test
    void aStreamEndingInsideABlockWritesThatBlockWholeWithItsRestKept() throws Exception {
        byte[] data = input(MiB * 3 + 700, 7);
        MemoryDevice memory = filledDevice(4 * MiB, (byte) 0x33);
        Pipe pipe = Pipe.open();
        CompletableFuture<Void> fed = feed(pipe, data);
        try (Pipe.SourceChannel in = pipe.source()) {
            new StreamCopier(new CopyOptions().sparseBlock(0)).copy(in, new BlocksOnly(memory, 512));
        }
        fed.get();
        byte[] after = contents(memory, 4 * MiB);
        assertArrayEquals(data, Arrays.copyOf(after, data.length));
        assertEquals(0x33, after[data.length], "the rest of the last block");
    }

    /** A memory device of {@code size} bytes, every one of them {@code fill}: what a stream must leave past its end. */
    private static MemoryDevice filledDevice(int size, byte fill) throws IOException {
        MemoryDevice device = new MemoryDevice(size);
        byte[] old = new byte[size];
        Arrays.fill(old, fill);
        device.write(ByteBuffer.wrap(old), 0, false);
        return device;
    }

    /** Two lengths: one ending inside a block, one ending with whole zero blocks, which are skipped, not written. */
    @Test
    void aStreamIntoANewFileMakesItExactlyAsLongWithHolesForTheZeroBlocks() throws Exception {
        for (int length : new int[] {4 * MiB + 123, 4 * MiB}) {
            byte[] data = input(length, 8);
            Path path = dir.resolve("new-" + length + ".img");
            Pipe pipe = Pipe.open();
            CompletableFuture<Void> fed = feed(pipe, data);
            CopyResult result;
            try (Pipe.SourceChannel in = pipe.source();
                 StorageFile file = StorageFile.open(path, CacheMode.WRITEBACK, StandardOpenOption.READ,
                         StandardOpenOption.WRITE, StandardOpenOption.CREATE_NEW)) {
                result = new StreamCopier(new CopyOptions()).copy(in, file);
            }
            fed.get();
            assertArrayEquals(data, Files.readAllBytes(path), "the file holds the stream and is as long");
            assertTrue(result.skippedBytes() >= MiB, "zero blocks of a new file are skipped: " + result);
            try (StorageFile file = StorageFile.open(path)) {
                if (file.isNative()) {
                    assertTrue(file.extents(MiB, MiB).stream().anyMatch(Extent::hole), "the 1 MiB zero run is a hole: "
                            + file.extents(0, file.size()));
                }
            }
        }
    }

    @Test
    void aCancelledCopyStopsAtItsNextRequest() throws Exception {
        ByteArrayOutputStream sink = new ByteArrayOutputStream();
        StreamCopier[] self = new StreamCopier[1];
        CopyOptions cancelling = new CopyOptions().requestSize(64 * 1024).progress((done, total) -> {
            if (done >= MiB) self[0].cancel();
        });
        self[0] = new StreamCopier(cancelling);
        Copier.CopyCancelledException e = assertThrows(Copier.CopyCancelledException.class,
                () -> self[0].copy(SyntheticDevices.pattern(64L * MiB), Channels.newChannel(sink)));
        assertEquals(MiB, sink.size(), "nothing after the cancel");
        assertTrue(e.getMessage().contains("after " + MiB + " of"), e.getMessage());
    }
}

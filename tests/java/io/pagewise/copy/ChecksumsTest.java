package io.pagewise.copy;

import static io.pagewise.testing.TestData.randomFile;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.pagewise.CacheMode;
import io.pagewise.backends.FileDevice;
import io.pagewise.device.BlockDevice;
import io.pagewise.device.FilterDevice;
import io.pagewise.nbd.server.NbdServer;
import io.pagewise.testing.ExternalTools;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link Checksums#of} gives what blksum, the reference tool, prints: for files, sparse images and NBD exports. And it
 * reads only the data of a sparse file, never its holes.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class ChecksumsTest {
    @TempDir
    Path dir;

    /** A sparse image: random data runs, zero runs written as data, and holes; size a multiple of 512. */
    private Path sparseImage(String name, long size, long seed) throws IOException {
        Path path = dir.resolve(name);
        Random random = new Random(seed);
        try (RandomAccessFile file = new RandomAccessFile(path.toFile(), "rw")) {
            file.setLength(size);
            byte[] run = new byte[(int) Math.min(300_000, size)];
            for (int i = 0; i < 40; i++) {
                int length = 1 + random.nextInt(run.length);
                long at = Math.floorMod(random.nextLong(), size - length + 1);
                random.nextBytes(run);
                if (i % 5 == 0) java.util.Arrays.fill(run, (byte) 0); // zeros written as data
                file.seek(at);
                file.write(run, 0, length);
            }
        }
        return path;
    }

    private static String blksum(String what) throws IOException {
        Path blksum = ExternalTools.blksum();
        String out = ExternalTools.run(120, blksum.toString(), what).assertOk("blksum " + what).stdout();
        return out.trim().split("\\s+")[0];
    }

    @Test
    void filesAndSparseImagesAsBlksumSumsThem() throws IOException {
        ExternalTools.require("qemu-nbd"); // blksum reads files through qemu-nbd
        for (long size : new long[] {512, 64L << 10, (1L << 20) + 512, 256L << 20}) {
            Path image = sparseImage("image-" + size + ".raw", size, size);
            try (FileDevice device = FileDevice.open(image, CacheMode.EVICT)) {
                for (int threads : new int[] {1, 4}) {
                    assertEquals(blksum(image.toString()), BlockHash.hex(Checksums.of(device, BlockHash.sha256(), threads)),
                            image + " with " + threads + " threads");
                }
            }
        }
    }

    @Test
    void otherDigestsAndBlockSizesAsBlksum() throws IOException {
        ExternalTools.require("qemu-nbd");
        Path image = sparseImage("image.raw", 8L << 20, 3);
        try (FileDevice device = FileDevice.open(image, CacheMode.EVICT)) {
            String ours = BlockHash.hex(Checksums.of(device, new BlockHash("sha1", 64 << 10), 2));
            Path blksum = ExternalTools.blksum();
            String theirs = ExternalTools.run(60, blksum.toString(), "--digest=sha1", image.toString())
                    .assertOk("blksum --digest=sha1").stdout().trim().split("\\s+")[0];
            assertEquals(theirs, ours);
        }
    }

    @Test
    void anNbdExportAsBlksumSumsItsUri() throws IOException {
        Path image = sparseImage("export.raw", 64L << 20, 5);
        try (FileDevice device = FileDevice.open(image, CacheMode.EVICT);
             NbdServer server = NbdServer.builder().export("", device).unixSocket(dir.resolve("nbd.sock")).start()) {
            assertEquals(blksum(server.uri()), BlockHash.hex(Checksums.of(device, BlockHash.sha256(), 4)));
        }
    }

    /**
     * blksum reads a file through qemu-nbd, which rounds its size up to 512 bytes; a size that is no multiple of 512
     * is hashed as it is, as blksum hashes the same bytes from a pipe.
     */
    @Test
    void anOddSizeIsHashedAsItIsAsBlksumHashesAPipe() throws IOException {
        Path odd = randomFile(dir.resolve("odd.bin"), 8, 100_003);
        Path blksum = ExternalTools.blksum();
        String fromPipe = ExternalTools.run(60, "sh", "-c", blksum + " < " + odd).assertOk("blksum < file").stdout()
                .trim().split("\\s+")[0];
        try (FileDevice device = FileDevice.open(odd, CacheMode.WRITEBACK)) {
            assertEquals(fromPipe, BlockHash.hex(Checksums.of(device, BlockHash.sha256(), 2)));
        }
    }

    @Test
    void holesAreNotRead() throws IOException {
        Path image = dir.resolve("holes.raw");
        long size = 1L << 30;
        try (RandomAccessFile file = new RandomAccessFile(image.toFile(), "rw")) {
            file.setLength(size);
            byte[] data = new byte[1 << 20];
            new Random(1).nextBytes(data);
            file.seek(100L << 20);
            file.write(data);
            file.seek(size - data.length);
            file.write(data);
        }
        AtomicLong read = new AtomicLong();
        try (FileDevice file = FileDevice.open(image, CacheMode.EVICT)) {
            BlockDevice counting = new FilterDevice(file) {
                @Override
                public void readFully(ByteBuffer dst, long offset) throws IOException {
                    read.addAndGet(dst.remaining());
                    super.readFully(dst, offset);
                }
            };
            byte[] sum = Checksums.of(counting, BlockHash.sha256(), 2);
            assertEquals(2L << 20, read.get(), "bytes read: the two data runs only");
            // The same image with every byte read and given as data: skipping the holes changed nothing.
            Accumulator plain = BlockHash.sha256().accumulator(size);
            ByteBuffer buffer = ByteBuffer.allocate(4 << 20);
            for (long at = 0; at < size; at += buffer.capacity()) {
                file.readFully(buffer.clear(), at);
                plain.data(at, buffer.flip());
            }
            assertEquals(BlockHash.hex(plain.finish()), BlockHash.hex(sum));
        }
    }
}

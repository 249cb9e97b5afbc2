package io.pagewise;

import static io.pagewise.Fixtures.assertBytes;
import static java.nio.file.StandardOpenOption.READ;
import static java.nio.file.StandardOpenOption.WRITE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.pagewise.Fixtures.BufferKind;
import io.pagewise.backends.FileDevice;
import io.pagewise.copy.Copier;
import io.pagewise.copy.CopyOptions;
import io.pagewise.device.BlockDevice;
import io.pagewise.testing.LoopMounts;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Zeroing and trimming on block devices, whose fallocate takes whole logical blocks only (EINVAL otherwise), with
 * ranges that start and end inside blocks: on loop devices of 512- and 4096-byte sectors, in every mode.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class BlockDeviceSpaceTest {
    private static final int REGION = 256 << 10;

    @RegisterExtension
    static final LoopMounts LOOPS = new LoopMounts();

    @TempDir
    Path dir;

    static Stream<Arguments> sectorsAndModes() {
        return Stream.of(512, 4096).flatMap(sector -> Arrays.stream(CacheMode.values()).map(mode -> Arguments.of(sector, mode)));
    }

    @ParameterizedTest(name = "{0}-byte sectors, {1}")
    @MethodSource("sectorsAndModes")
    void unalignedZeroAndTrimKeepTheBytesAroundThem(int sector, CacheMode mode) throws Exception {
        Path device = LOOPS.blockDevice(sector);
        byte[] expected = Fixtures.random(sector + mode.ordinal(), REGION);
        try (StorageFile file = StorageFile.open(device, mode, READ, WRITE)) {
            Fixtures.write(file, 0, expected, BufferKind.DIRECT);
            long[][] zeroed = {{100, 50}, {4000, 10_000}, {3 * 4096, 4096}, {40_000 + 7, 3 * 4096 + 100}};
            for (int i = 0; i < zeroed.length; i++) {
                file.zero(zeroed[i][0], zeroed[i][1], i % 2 == 0);
                Arrays.fill(expected, (int) zeroed[i][0], (int) (zeroed[i][0] + zeroed[i][1]), (byte) 0);
            }
            // Trim promises nothing inside its range; the bytes around it stay.
            long trimStart = 100_000 + 300;
            int trimLength = 5 * 4096 + 77;
            file.trim(trimStart, trimLength);
            byte[] actual = Fixtures.read(file, 0, REGION, BufferKind.DIRECT);
            System.arraycopy(actual, (int) trimStart, expected, (int) trimStart, trimLength);
            assertBytes(expected, actual, sector + "-byte sectors, " + mode);
        }
    }

    /** The copier zeroes a sparse image's holes on the device, its unaligned end included (EVICT, its default). */
    @ParameterizedTest(name = "{0}-byte sectors")
    @MethodSource("sectors")
    void aSparseImageWithAnUnalignedEndCopiesToABlockDevice(int sector) throws Exception {
        Path device = LOOPS.blockDevice(sector);
        try (StorageFile garbage = StorageFile.open(device, CacheMode.WRITEBACK, READ, WRITE)) {
            Fixtures.write(garbage, 0, Fixtures.random(7, 2 << 20), BufferKind.DIRECT);
        }
        Path image = dir.resolve("sparse.img");
        byte[] data = Fixtures.random(8, 4306);
        try (RandomAccessFile raf = new RandomAccessFile(image.toFile(), "rw")) {
            raf.setLength((1 << 20) + 1234);
            raf.seek(4096 + 300);
            raf.write(data);
        }
        try (BlockDevice src = FileDevice.open(image, CacheMode.EVICT);
             BlockDevice dst = FileDevice.open(device, CacheMode.EVICT, READ, WRITE)) {
            new Copier(new CopyOptions()).copy(src, dst);
        }
        byte[] expected = Files.readAllBytes(image);
        try (StorageFile copied = StorageFile.open(device)) {
            assertBytes(expected, Fixtures.read(copied, 0, expected.length, BufferKind.HEAP), "the copy on " + device);
            ByteBuffer after = ByteBuffer.allocate(16);
            assertEquals(16, copied.read(after, expected.length));
            assertFalse(Arrays.equals(new byte[16], after.array()), "the device past the image keeps its bytes");
        }
    }

    static Stream<Integer> sectors() {
        return Stream.of(512, 4096);
    }
}

package io.pagewise;

import static java.nio.file.StandardOpenOption.READ;
import static java.nio.file.StandardOpenOption.WRITE;
import static org.junit.jupiter.api.Assertions.assertAll;

import io.pagewise.Fixtures.BufferKind;
import io.pagewise.testing.ExternalTools;
import io.pagewise.testing.LazyFsExtension;
import io.pagewise.testing.LazyFsMount;
import java.io.IOException;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * What {@link StorageFile} calls durable survives a power cut (LazyFS): FUA writes, writes before a flush, zeros
 * before a flush, and in the modes that {@linkplain CacheMode#syncsEveryWrite() sync every write} every write, zero
 * and trim by itself. Appends that end off a block boundary keep their exact size. The file is never closed
 * before the cut, since closing may sync; UNSAFE promises nothing and is left out.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class PowerLossTest {
    @RegisterExtension
    static final LazyFsExtension LAZYFS = new LazyFsExtension();

    private static final int BLOCK = 64 << 10;
    private static final int BLOCKS = 16;
    private static final AtomicInteger FILES = new AtomicInteger();

    /** A new file on the mount holding old, durable data ({@link LazyFsMount#durableFile}); returns its name. */
    private static String durableFile(byte[] old) throws IOException {
        String name = "file-" + FILES.incrementAndGet();
        LAZYFS.mount().durableFile(name, old);
        return name;
    }

    private static StorageFile open(String name, CacheMode mode) throws IOException {
        if (mode.needsNative()) ExternalTools.requireNativeLibrary();
        return StorageFile.open(LAZYFS.mount().file(name), mode, READ, WRITE);
    }

    /** What a test does to the open file before the power is cut. */
    private interface Writes {
        void to(StorageFile file) throws IOException;
    }

    /** Opens name in mode, runs writes, cuts the power with the file still open, and checks that expected survived. */
    private static void assertCutKeeps(String name, CacheMode mode, Writes writes, byte[] expected, int blockSize,
                                       String what) throws Exception {
        LazyFsMount lazyfs = LAZYFS.mount();
        try (StorageFile file = open(name, mode)) {
            writes.to(file);
            lazyfs.powerCut();
        }
        lazyfs.assertSurvived(name, expected, blockSize, mode + ": " + what);
    }

    /** Writes data in blocks of blockSize, each from a direct buffer, with FUA or without. */
    private static void writeBlocks(StorageFile file, byte[] data, int blockSize, boolean fua) throws IOException {
        for (int at = 0; at < data.length; at += blockSize) {
            Fixtures.write(file, at, Arrays.copyOfRange(data, at, at + blockSize), BufferKind.DIRECT, fua);
        }
    }

    /**
     * Overwrites a file of old, durable data with blocks of blockSize, each with FUA or without, then flushes or
     * not, cuts the power, and checks that the new data survived.
     */
    private static void assertOverwriteSurvives(CacheMode mode, int blockSize, int blocks, boolean fua, boolean flush)
            throws Exception {
        byte[] fresh = Fixtures.random(2, blocks * blockSize);
        assertCutKeeps(durableFile(Fixtures.random(1, blocks * blockSize)), mode, file -> {
            writeBlocks(file, fresh, blockSize, fua);
            if (flush) file.flush();
        }, fresh, blockSize, blocks + " writes of " + blockSize + " bytes" + (fua ? " with FUA" : "")
                + (flush ? ", then flush" : ", no flush"));
    }

    /**
     * Zeroes every other block of a file of old, durable data (half of them with may-trim), then flushes or not,
     * cuts the power, and checks that the zeros and the data between them survived.
     */
    private static void assertZerosSurvive(CacheMode mode, boolean flush) throws Exception {
        byte[] expected = Fixtures.random(5, BLOCKS * BLOCK);
        assertCutKeeps(durableFile(expected.clone()), mode, file -> {
            for (int b = 0; b < BLOCKS; b += 2) {
                file.zero((long) b * BLOCK, BLOCK, b % 4 == 0);
                Arrays.fill(expected, b * BLOCK, (b + 1) * BLOCK, (byte) 0);
            }
            if (flush) file.flush();
        }, expected, BLOCK, "every other block zeroed" + (flush ? ", then flush" : ", no flush"));
    }

    @ParameterizedTest
    @MethodSource("io.pagewise.testing.LazyFsMount#durableModes")
    void fuaWritesSurvive(CacheMode mode) throws Exception {
        assertOverwriteSurvives(mode, BLOCK, BLOCKS, true, false);
    }

    @ParameterizedTest
    @MethodSource("io.pagewise.testing.LazyFsMount#durableModes")
    void writesBeforeAFlushSurvive(CacheMode mode) throws Exception {
        assertOverwriteSurvives(mode, BLOCK, BLOCKS, false, true);
    }

    @ParameterizedTest
    @MethodSource("io.pagewise.testing.LazyFsMount#durableModes")
    void zerosBeforeAFlushSurvive(CacheMode mode) throws Exception {
        assertZerosSurvive(mode, true);
    }

    /**
     * EVICT and DONTCACHE send writes of 256 KiB and more in whole pages by O_DIRECT through a second descriptor:
     * FUA writes on it survive by themselves, and plain ones once the file is flushed, as the buffered ones do.
     */
    @ParameterizedTest
    @EnumSource(value = CacheMode.class, names = {"EVICT", "DONTCACHE"})
    void largeFuaWritesSurvive(CacheMode mode) throws Exception {
        assertOverwriteSurvives(mode, 1 << 20, 4, true, false);
    }

    @ParameterizedTest
    @EnumSource(value = CacheMode.class, names = {"EVICT", "DONTCACHE"})
    void largeWritesBeforeAFlushSurvive(CacheMode mode) throws Exception {
        assertOverwriteSurvives(mode, 1 << 20, 4, false, true);
    }

    @ParameterizedTest
    @MethodSource("io.pagewise.testing.LazyFsMount#everyWriteModes")
    void everyWriteSurvives(CacheMode mode) throws Exception {
        assertOverwriteSurvives(mode, BLOCK, BLOCKS, false, false);
    }

    /** In the modes that make every write durable, a zeroed range is durable too, without FUA or flush. */
    @ParameterizedTest
    @MethodSource("io.pagewise.testing.LazyFsMount#everyWriteModes")
    void everyZeroSurvives(CacheMode mode) throws Exception {
        assertZerosSurvive(mode, false);
    }

    /**
     * TRIM promises nothing about what a range reads afterwards, but in these modes what it left (a hole, or the
     * old data where holes cannot be punched) must be what a power cut leaves. LazyFS has no fallocate, so here
     * trim keeps the data and zero writes zeros: the fallocate paths of both are not reached by these tests.
     */
    @ParameterizedTest
    @MethodSource("io.pagewise.testing.LazyFsMount#everyWriteModes")
    void everyTrimSurvives(CacheMode mode) throws Exception {
        LazyFsMount lazyfs = LAZYFS.mount();
        String name = durableFile(new byte[0]);
        byte[] before;
        try (StorageFile file = open(name, mode)) {
            byte[] data = Fixtures.random(9, BLOCKS * BLOCK);
            writeBlocks(file, data, BLOCK, false);
            file.flush();
            for (int b = 1; b < BLOCKS; b += 2) file.trim((long) b * BLOCK, BLOCK);
            before = Fixtures.readFully(file, 0, BLOCKS * BLOCK);
            lazyfs.powerCut();
        }
        lazyfs.assertSurvived(name, before, BLOCK, mode + ": every other block trimmed, no flush");
    }

    /**
     * A durable write that grows the file to a size off a block boundary keeps that size: where the write was
     * padded to a whole block (O_DIRECT), cutting the padding back must reach the disk before the write returns.
     */
    @ParameterizedTest
    @MethodSource("io.pagewise.testing.LazyFsMount#durableModes")
    void fuaAppendsOffABlockBoundaryKeepTheirSize(CacheMode mode) throws Exception {
        unalignedAppends(mode, true);
    }

    @ParameterizedTest
    @MethodSource("io.pagewise.testing.LazyFsMount#everyWriteModes")
    void plainAppendsOffABlockBoundaryKeepTheirSize(CacheMode mode) throws Exception {
        unalignedAppends(mode, false);
    }

    private static void unalignedAppends(CacheMode mode, boolean fua) throws Exception {
        LazyFsMount lazyfs = LAZYFS.mount();
        byte[] old = Fixtures.random(10, 8192);
        String atEnd = durableFile(old);
        String across = durableFile(old);
        byte[] appended = Arrays.copyOf(old, 8192 + 1000);
        System.arraycopy(Fixtures.random(11, 1000), 0, appended, 8192, 1000);
        byte[] grown = Arrays.copyOf(old, 9000);
        System.arraycopy(Fixtures.random(12, 3000), 0, grown, 6000, 3000);
        try (StorageFile end = open(atEnd, mode); StorageFile middle = open(across, mode)) {
            Fixtures.write(end, 8192, Arrays.copyOfRange(appended, 8192, appended.length), BufferKind.DIRECT, fua);
            Fixtures.write(middle, 6000, Arrays.copyOfRange(grown, 6000, grown.length), BufferKind.HEAP, fua);
            lazyfs.powerCut();
        }
        String how = fua ? "FUA" : "plain";
        assertAll(
                () -> lazyfs.assertSurvived(atEnd, appended, 4096, mode + ": a " + how + " write of 1000 bytes at the end of 8192"),
                () -> lazyfs.assertSurvived(across, grown, 4096, mode + ": a " + how + " write of 3000 bytes at 6000 of 8192"));
    }
}

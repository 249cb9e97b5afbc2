package io.pagewise;

import static io.pagewise.Fixtures.assertBytes;
import static java.nio.file.StandardOpenOption.CREATE_NEW;
import static java.nio.file.StandardOpenOption.READ;
import static java.nio.file.StandardOpenOption.WRITE;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.pagewise.Fixtures.BufferKind;
import io.pagewise.Fixtures.Model;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every cache mode stores and returns exactly the bytes written, whatever the offset, length and kind of buffer,
 * keeps the file size at exactly the end of the furthest write, and reads short at end of file.
 */
@Timeout(60)
class CacheModeRoundTripTest {
    @TempDir
    Path dir;

    static Stream<Arguments> modesAndBuffers() {
        List<Arguments> all = new ArrayList<>();
        for (CacheMode mode : CacheMode.values()) {
            for (BufferKind kind : BufferKind.values()) all.add(Arguments.of(mode, kind));
        }
        return all.stream();
    }

    /** Fixed cases that hit block-aligned, unaligned, tiny, bounce-buffer-sized and hole-leaving writes. */
    private static final long[][] FIXED = {
        {0, 4096}, {4096, 8192}, {0, 1}, {1, 1}, {4095, 2}, {511, 513}, {12288 + 100, 4096},
        {8191, (1 << 20) + 3},          // longer than one bounce buffer, unaligned at both ends, extends the file
        {(3 << 20) + 123, 70001},       // starts past the end of file: leaves a hole, ends unaligned
        {1 << 20, 1 << 20},             // aligned overwrite in the middle
        {4096 * 5 + 17, 3 * 4096},      // unaligned start, aligned length
        {2 * 4096, 4096 * 3 - 1},       // aligned start, unaligned end inside the file
    };

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("modesAndBuffers")
    void randomDataRoundTripsAtAlignedAndUnalignedRanges(CacheMode mode, BufferKind kind) throws Exception {
        Path path = dir.resolve("data");
        Random random = new Random(mode.ordinal() * 31L + kind.ordinal());
        Model model = new Model();
        try (StorageFile file = StorageFile.open(path, mode, CREATE_NEW, READ, WRITE)) {
            List<long[]> cases = new ArrayList<>(List.of(FIXED));
            for (int i = 0; i < 16; i++) {
                cases.add(new long[] {random.nextInt(4 << 20), 1 + random.nextInt(random.nextBoolean() ? 9000 : 200_000)});
            }
            for (long[] c : cases) {
                byte[] data = model.writeRandom(file, random, c[0], (int) c[1], kind, false);
                // Immediately readable through the same file, with the same kind of buffer.
                assertBytes(data, Fixtures.read(file, c[0], data.length, kind), "read back at " + c[0]);
            }
            assertEquals(model.size(), Files.size(path));
            assertBytes(model.bytes(), Fixtures.read(file, 0, model.size(), kind), mode + " whole file via StorageFile");

            for (int i = 0; i < 40; i++) {
                long offset = random.nextInt(model.size() + 20_000);
                int length = random.nextInt(i % 4 == 0 ? 300_000 : 10_000);
                assertBytes(model.slice(offset, length), Fixtures.read(file, offset, length, kind),
                        "read of " + length + " at " + offset + " (size " + model.size() + ")");
            }
        }
        // An independent reader (plain Java I/O through the page cache) sees the same bytes.
        assertBytes(model.bytes(), Files.readAllBytes(path), mode + " whole file via Files.readAllBytes");
        // So does a fresh open in the same mode.
        try (StorageFile again = StorageFile.open(path, mode)) {
            assertBytes(model.bytes(), Fixtures.read(again, 0, model.size() + 4096, kind), "reopened");
        }
    }

    @ParameterizedTest
    @EnumSource(CacheMode.class)
    void writesPastTheEndLeaveExactlyTheEndWrittenAsTheSize(CacheMode mode) throws Exception {
        Path path = dir.resolve("grow");
        Random random = new Random(mode.ordinal());
        Model model = new Model();
        try (StorageFile file = StorageFile.open(path, mode, CREATE_NEW, WRITE)) {
            for (int i = 0; i < 60; i++) {
                long offset;
                switch (i % 4) {
                    case 0: offset = model.size(); break;                                   // append
                    case 1: offset = model.size() + 1 + random.nextInt(10_000); break;      // past the end: hole
                    case 2: offset = Math.max(0, model.size() - 1 - random.nextInt(100)); break; // inside the last block
                    default: offset = Math.max(0, model.size() - random.nextInt(6000)); break;   // straddles the end
                }
                int length = 1 + random.nextInt(i % 4 == 2 ? 50 : 9000);
                if (i % 4 == 2) length = (int) Math.min(length, model.size() - offset); // stays inside the file
                if (length <= 0) length = 1;
                model.writeRandom(file, random, offset, length, BufferKind.inTurn(i), false);
                assertEquals(model.size(), Files.size(path));
            }
        }
        assertBytes(model.bytes(), Files.readAllBytes(path), mode + " content");
    }

    /**
     * 24 MiB touched in scattered order: more 2 MiB windows than EVICT keeps active or in writeback, so windows are
     * retired (written back, waited for, dropped) while I/O goes on, and close finishes the dirty ones.
     */
    @ParameterizedTest
    @EnumSource(CacheMode.class)
    void dataSurvivesManyEvictionWindows(CacheMode mode) throws Exception {
        Path path = dir.resolve("windows");
        int chunk = (1 << 20) - 1000; // unaligned, so chunks straddle window edges
        int chunks = 25;
        Model model = new Model();
        List<Integer> order = new ArrayList<>();
        for (int i = 0; i < chunks; i++) order.add(i);
        java.util.Collections.shuffle(order, new Random(mode.ordinal()));
        try (StorageFile file = StorageFile.open(path, mode, CREATE_NEW, READ, WRITE)) {
            for (int i : order) {
                byte[] data = Fixtures.random(i, chunk);
                Fixtures.write(file, (long) i * chunk, data, i % 2 == 0 ? BufferKind.DIRECT : BufferKind.HEAP, i % 5 == 0);
                model.write((long) i * chunk, data);
                int back = order.get((i * 7) % chunks);
                assertBytes(model.slice((long) back * chunk, chunk), Fixtures.read(file, (long) back * chunk, chunk,
                        BufferKind.HEAP), "read of chunk " + back + " between writes");
            }
            assertEquals(model.size(), file.size());
            assertBytes(model.bytes(), Fixtures.read(file, 0, model.size(), BufferKind.DIRECT), mode + " before close");
        }
        assertBytes(model.bytes(), Files.readAllBytes(path), mode + " after close");
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("modesAndBuffers")
    void readsAcrossTheEndAreShortAndReadsPastItReturnZero(CacheMode mode, BufferKind kind) throws Exception {
        Path path = dir.resolve("short");
        byte[] content = Fixtures.random(7, 10_000);
        Files.write(path, content);
        try (StorageFile file = StorageFile.open(path, mode)) {
            assertBytes(content, Fixtures.read(file, 0, 20_000, kind), "read over the whole file");
            assertBytes(java.util.Arrays.copyOfRange(content, 5000, 10_000), Fixtures.read(file, 5000, 12_000, kind),
                    "read across the end");
            assertBytes(java.util.Arrays.copyOfRange(content, 9999, 10_000), Fixtures.read(file, 9999, 4096, kind),
                    "read of the last byte");
            assertEquals(0, Fixtures.read(file, 10_000, 4096, kind).length, "read at the end");
            assertEquals(0, Fixtures.read(file, 10_001, 100, kind).length, "read just past the end");
            assertEquals(0, Fixtures.read(file, 1L << 40, 8192, kind).length, "read far past the end");
            assertEquals(0, Fixtures.read(file, 100, 0, kind).length, "empty read");
            assertEquals(10_000, file.size(), "reads never change the size");
        }
    }
}

package io.pagewise.nbd;

import io.pagewise.testing.ExternalTools;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.CacheMode;
import io.pagewise.StorageFile;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** The clients people use against NBD servers — nbdinfo, qemu-img, nbdcopy — against every cache mode. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ClientInteropTest {
    private static final long MiB = 1 << 20;
    private static final int ISLAND = 64 * 1024;
    /** Where writeIslands puts its data: 64 KiB aligned, so that any filesystem block size up to that maps them exactly. */
    private static final long[] ISLANDS = {0, 3 * MiB, 3 * MiB + 512 * 1024, 9 * MiB, 16 * MiB - ISLAND};

    @TempDir
    Path dir;

    /** Writes a few data islands into a sparse 16 MiB file; the rest stays holes. */
    private static void writeIslands(Path file) throws Exception {
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
            byte[] data = new byte[ISLAND];
            new Random(7).nextBytes(data);
            for (long at : ISLANDS) {
                raf.seek(at);
                raf.write(data);
            }
        }
    }

    @ParameterizedTest
    @EnumSource(CacheMode.class)
    void nbdinfoSeesSizeFlagsBlockSizesAndHoles(CacheMode mode) throws Exception {
        ExternalTools.require("nbdinfo");
        try (TestServer server = TestServer.start(dir, 16 * MiB, mode)) {
            writeIslands(server.file);
            String json = ExternalTools.run(30, "nbdinfo", "--json", server.uri()).assertOk("nbdinfo --json").stdout();
            assertEquals(16 * MiB, number(json, "export-size"));
            assertTrue(json.contains("\"is_read_only\": false"), json);
            for (String flag : List.of("can_flush", "can_fua", "can_trim", "can_zero", "can_multi_conn", "can_df")) {
                assertTrue(json.contains("\"" + flag + "\": true"), flag + " in " + json);
            }
            // CACHE only where it fills the page cache: not in the modes that keep data out of it.
            boolean caches = server.export.file().cacheMode().prefetches();
            assertTrue(json.contains("\"can_cache\": " + caches), "can_cache in " + json);
            assertTrue(json.contains("base:allocation"), json);
            // The direct modes advertise their O_DIRECT alignment, which is at least 512 bytes.
            long minimum = mode.isDirect() ? Math.max(512, server.export.file().alignment().offset()) : 1;
            assertEquals(minimum, number(json, "block_size_minimum"), json);
            assertEquals(Math.max(4096, minimum), number(json, "block_size_preferred"), json);
            assertEquals(64 * MiB, number(json, "block_size_maximum"), json);

            String map = ExternalTools.run(30, "nbdinfo", "--map", server.uri()).assertOk("nbdinfo --map").stdout();
            assertEquals(islandMap(16 * MiB), parseMap(map), map);
        }
    }

    /** nbdinfo --map lines are "offset length type description"; merged into runs of hole/data. */
    private static List<String> parseMap(String map) {
        List<String> runs = new ArrayList<>();
        long runStart = 0;
        long runEnd = 0;
        String runKind = null;
        for (String line : map.strip().split("\n")) {
            String[] f = line.trim().split("\\s+");
            long offset = Long.parseLong(f[0]);
            long length = Long.parseLong(f[1]);
            String kind = (Integer.parseInt(f[2]) & 1) != 0 ? "hole" : "data";
            assertEquals(runEnd, offset, "gap or overlap in the map:\n" + map);
            if (!kind.equals(runKind)) {
                if (runKind != null) runs.add(runStart + "+" + (runEnd - runStart) + " " + runKind);
                runStart = offset;
                runKind = kind;
            }
            runEnd = offset + length;
        }
        if (runKind != null) runs.add(runStart + "+" + (runEnd - runStart) + " " + runKind);
        return runs;
    }

    /** The map writeIslands makes in a sparse file of size bytes: its islands as data, the rest as holes. */
    private static List<String> islandMap(long size) {
        List<String> runs = new ArrayList<>();
        long at = 0;
        for (long island : ISLANDS) {
            if (island > at) runs.add(at + "+" + (island - at) + " hole");
            runs.add(island + "+" + ISLAND + " data");
            at = island + ISLAND;
        }
        if (at < size) runs.add(at + "+" + (size - at) + " hole");
        return runs;
    }

    private static long number(String json, String key) {
        Matcher m = Pattern.compile("\"" + Pattern.quote(key) + "\":\\s*(\\d+)").matcher(json);
        assertTrue(m.find(), key + " in " + json);
        return Long.parseLong(m.group(1));
    }

    @ParameterizedTest
    @EnumSource(value = CacheMode.class, names = {"WRITEBACK", "DIRECT", "EVICT"})
    void qemuImgConvertsToAndFromTheServer(CacheMode mode) throws Exception {
        ExternalTools.require("qemu-img");
        Path source = dir.resolve("source.img");
        try (RandomAccessFile raf = new RandomAccessFile(source.toFile(), "rw")) {
            raf.setLength(16 * MiB);
        }
        writeIslands(source);
        try (TestServer server = TestServer.start(dir, 16 * MiB, mode)) {
            ExternalTools.run(60, "qemu-img", "convert", "-n", "-f", "raw", "-O", "raw", source.toString(), server.uri())
                    .assertOk("qemu-img convert to the server");
            ExternalTools.run(60, "qemu-img", "compare", "-f", "raw", "-F", "raw", source.toString(), server.uri())
                    .assertOk("qemu-img compare");
            Path back = dir.resolve("back.qcow2");
            ExternalTools.run(60, "qemu-img", "convert", "-f", "raw", "-O", "qcow2", server.uri(), back.toString())
                    .assertOk("qemu-img convert from the server");
            ExternalTools.run(60, "qemu-img", "compare", "-f", "raw", "-F", "qcow2", source.toString(), back.toString())
                    .assertOk("qemu-img compare of the copy");
            String info = ExternalTools.run(30, "qemu-img", "info", server.uri()).assertOk("qemu-img info").stdout();
            assertTrue(info.contains("16 MiB"), info);
        }
        assertArrayEquals(Files.readAllBytes(source), Files.readAllBytes(dir.resolve("disk.img")));
    }

    @Test
    void nbdcopyWithFourConnectionsBothWays() throws Exception {
        ExternalTools.require("nbdcopy", "cmp");
        Path source = dir.resolve("source.img");
        byte[] random = new byte[(int) (24 * MiB)];
        new Random(11).nextBytes(random);
        Files.write(source, random);
        try (StorageFile f = StorageFile.open(source, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            f.zero(5 * MiB, 3 * MiB, true); // a hole in the middle
        }
        try (TestServer server = TestServer.start(dir, 24 * MiB, CacheMode.WRITEBACK)) {
            ExternalTools.run(60, "nbdcopy", "-C", "4", "--requests=32", "--flush", source.toString(), server.uri())
                    .assertOk("nbdcopy to the server");
            ExternalTools.run(30, "cmp", source.toString(), server.file.toString()).assertOk("cmp after upload");
            Path back = dir.resolve("back.img");
            ExternalTools.run(60, "nbdcopy", "-C", "4", server.uri(), back.toString()).assertOk("nbdcopy from the server");
            ExternalTools.run(30, "cmp", source.toString(), back.toString()).assertOk("cmp after download");
            assertTrue(server.server.stats().connections() >= 4, "connections: " + server.server.stats().connections());
        }
    }

    @Test
    void readOnlyExportRefusesWritesAndSaysSo() throws Exception {
        ExternalTools.require("nbdinfo", "qemu-img");
        try (TestServer server = TestServer.start(dir, 4 * MiB, CacheMode.WRITEBACK, true, null)) {
            String json = ExternalTools.run(30, "nbdinfo", "--json", server.uri()).assertOk("nbdinfo").stdout();
            assertTrue(json.contains("\"is_read_only\": true"), json);
            assertTrue(json.contains("\"can_trim\": false") && json.contains("\"can_zero\": false"), json);
            Path source = dir.resolve("source.img");
            Files.write(source, new byte[(int) (4 * MiB)]);
            Files.write(source, new byte[] {1}, StandardOpenOption.WRITE);
            ExternalTools.Result copy = ExternalTools.run(60, "qemu-img", "convert", "-n", "-f", "raw", "-O", "raw",
                    source.toString(), server.uri());
            assertTrue(copy.status() != 0, "qemu-img wrote to a read-only export");
        }
        ByteBuffer first = ByteBuffer.allocate(1);
        try (var channel = Files.newByteChannel(dir.resolve("disk.img"))) {
            channel.read(first);
        }
        assertEquals(0, first.get(0), "the read-only file changed");
    }
}

package io.pagewise.nbd;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.CacheMode;
import io.pagewise.backends.FileDevice;
import io.pagewise.backends.MemoryDevice;
import io.pagewise.device.BlockDevice;
import io.pagewise.device.FilterDevice;
import io.pagewise.filters.FaultFilter.Operation;
import io.pagewise.filters.Filters;
import io.pagewise.filters.StatsFilter;
import io.pagewise.nbd.server.NbdServer;
import io.pagewise.testing.ExternalTools;
import io.pagewise.testing.RecordingLogger;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Each filter served by the NBD server and checked with real clients: qemu-io, qemu-img, nbdinfo, nbdcopy, nbdsh. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class FilterClientsTest {
    private static final int MIB = 1 << 20;

    @TempDir
    Path dir;

    private NbdServer serve(BlockDevice device) throws IOException {
        return NbdServer.builder().export("", device).unixSocket(dir.resolve("nbd.sock"))
                .logger(new RecordingLogger("[server] ", System.Logger.Level.INFO)).start();
    }

    private static String sha256(Path file) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(file)));
    }

    /** A file of size bytes whose first dataBytes are random and the rest a hole. */
    private Path sparseFile(String name, int dataBytes, long size) throws IOException {
        Path file = dir.resolve(name);
        byte[] data = new byte[dataBytes];
        new Random(1).nextBytes(data);
        Files.write(file, data);
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
            raf.setLength(size);
        }
        return file;
    }

    /** nbdinfo --map as runs of (offset, length, hole), adjacent runs of one kind merged. */
    private static List<List<Long>> map(String uri) throws IOException {
        String out = ExternalTools.run(30, "nbdinfo", "--map", uri).assertOk("nbdinfo --map").stdout();
        List<List<Long>> runs = new ArrayList<>();
        for (String line : out.strip().split("\n")) {
            String[] f = line.trim().split("\\s+");
            long offset = Long.parseLong(f[0]);
            long length = Long.parseLong(f[1]);
            long hole = (Long.parseLong(f[2]) & 1) != 0 ? 1 : 0;
            List<Long> last = runs.isEmpty() ? null : runs.get(runs.size() - 1);
            if (last != null && last.get(2) == hole && last.get(0) + last.get(1) == offset) {
                runs.set(runs.size() - 1, List.of(last.get(0), last.get(1) + length, hole));
            } else {
                runs.add(List.of(offset, length, hole));
            }
        }
        return runs;
    }

    @Test
    void cowKeepsTheBaseWhileClientsWriteAndMapsBoth() throws Exception {
        ExternalTools.require("qemu-io", "qemu-img", "nbdinfo", "nbdcopy", "cmp");
        ExternalTools.requireNativeLibrary();
        Path base = sparseFile("base.img", 4 * MIB, 8 * MIB);
        String before = sha256(base);
        Path expected = dir.resolve("expected.img");
        Files.copy(base, expected);
        try (BlockDevice cow = Filters.apply(FileDevice.open(base, CacheMode.WRITEBACK), List.of("cow"));
             NbdServer server = serve(cow)) {
            String[] changes = {"write -P 0x77 100 1000", "write -P 0x5a 1M 64k", "write -z 2M 1M",
                    "write -P 0x33 6M 4k"};
            for (String change : changes) {
                ExternalTools.run(30, "qemu-io", "-f", "raw", server.uri(), "-c", change).assertOk("qemu-io " + change);
                ExternalTools.run(30, "qemu-io", "-f", "raw", expected.toString(), "-c", change)
                        .assertOk("qemu-io on the expected file");
            }
            ExternalTools.run(60, "qemu-img", "compare", "-f", "raw", "-F", "raw", expected.toString(), server.uri())
                    .assertOk("qemu-img compare: reads see the writes");
            Path copy = dir.resolve("copy.img");
            ExternalTools.run(60, "nbdcopy", server.uri(), copy.toString()).assertOk("nbdcopy");
            ExternalTools.run(30, "cmp", expected.toString(), copy.toString()).assertOk("cmp");
            assertEquals(List.of(
                    List.of(0L, 2L * MIB, 0L),                   // base data, written in places
                    List.of(2L * MIB, 1L * MIB, 1L),            // zeroed through the overlay
                    List.of(3L * MIB, 1L * MIB, 0L),            // base data
                    List.of(4L * MIB, 2L * MIB, 1L),            // base hole
                    List.of(6L * MIB, 64L * 1024, 0L),          // one 64 KiB overlay block written in the hole
                    List.of(6L * MIB + 64 * 1024, 2L * MIB - 64 * 1024, 1L)), map(server.uri()));
        }
        assertEquals(before, sha256(base), "the base file is unchanged");
    }

    @Test
    void errorReachesTheClientWithItsErrno() throws Exception {
        String python = ExternalTools.python();
        try (BlockDevice faulty = Filters.apply(new MemoryDevice(MIB), List.of("error:rate=1,error=ENOSPC,ops=write"));
             NbdServer server = serve(faulty)) {
            String script = String.join("\n",
                    "import errno, os, nbd",
                    "h = nbd.NBD()",
                    "h.connect_uri(os.environ['uri'])",
                    "assert len(h.pread(4096, 0)) == 4096",
                    "try:",
                    "    h.pwrite(b'x' * 512, 0)",
                    "    print('no error')",
                    "except nbd.Error as e:",
                    "    print(errno.errorcode[e.errnum])",
                    "");
            String out = ExternalTools.run(Map.of("uri", server.uri()), 30, python, "-c", script).assertOk("nbdsh")
                    .stdout();
            assertEquals("ENOSPC\n", out);
        }
    }

    @Test
    void rateBoundsACopyAndStatsCountsIt() throws Exception {
        ExternalTools.require("nbdcopy");
        Path stats = dir.resolve("stats.txt");
        try (BlockDevice limited = Filters.apply(new MemoryDevice(4 * MIB),
                List.of("stats:file=" + stats, "rate:rate=8M,burstiness=0.5"));
             NbdServer server = serve(limited)) {
            long start = System.nanoTime();
            ExternalTools.run(60, "nbdcopy", server.uri(), dir.resolve("out.img").toString()).assertOk("nbdcopy");
            double seconds = (System.nanoTime() - start) / 1e9;
            // 4 MiB at 8 Mibit/s (1 MiB/s) with 0.5 MiB in the bucket: at least 3.5 s.
            assertTrue(seconds >= 3.5, "4 MiB copied in " + seconds + " s");
            assertEquals(4L * MIB, ((StatsFilter) limited).snapshot().get(Operation.READ).bytes());
        }
        assertTrue(Files.readString(stats).contains("read: calls="), Files.readString(stats));
    }

    @Test
    void theServerAsksForAViewPerConnection() throws Exception {
        ExternalTools.require("nbdinfo");
        AtomicInteger views = new AtomicInteger();
        MemoryDevice memory = new MemoryDevice(MIB);
        BlockDevice counting = new FilterDevice(memory) {
            @Override
            public BlockDevice forConnection() {
                views.incrementAndGet();
                return new FilterDevice(memory) {};
            }
        };
        try (BlockDevice stack = Filters.apply(counting, List.of("stats", "readonly")); NbdServer server = serve(stack)) {
            ExternalTools.run(30, "nbdinfo", server.uri()).assertOk("nbdinfo");
            ExternalTools.run(30, "nbdinfo", server.uri()).assertOk("nbdinfo");
            assertEquals(2, views.get(), "one view per connection, through the filters above");
        }
    }

    @Test
    void blocksizeIsAdvertisedAndUnalignedWritesRoundTrip() throws Exception {
        String python = ExternalTools.python();
        ExternalTools.require("nbdinfo", "qemu-io");
        MemoryDevice memory = new MemoryDevice(MIB);
        try (BlockDevice blocks = Filters.apply(memory, List.of("blocksize:minblock=4K,maxdata=64K"));
             NbdServer server = serve(blocks)) {
            String json = ExternalTools.run(30, "nbdinfo", "--json", server.uri()).assertOk("nbdinfo").stdout();
            assertTrue(json.contains("\"block_size_minimum\": 4096"), json);
            assertTrue(json.contains("\"block_size_preferred\": 4096"), json);
            assertTrue(json.contains("\"block_size_maximum\": 65536"), json);
            ExternalTools.run(30, "qemu-io", "-f", "raw", server.uri(), "-c", "write -P 0xab 1000 3000")
                    .assertOk("qemu-io unaligned write");
            String read = ExternalTools.run(30, "qemu-io", "-f", "raw", server.uri(), "-c", "read -P 0xab 1000 3000")
                    .assertOk("qemu-io read").stdout();
            assertFalse(read.contains("verification failed"), read);
            // libnbd without its alignment check sends the unaligned request itself: the filter does the RMW.
            String script = String.join("\n",
                    "import os, nbd",
                    "h = nbd.NBD()",
                    "h.set_strict_mode(0)",
                    "h.connect_uri(os.environ['uri'])",
                    "h.pwrite(b'\\x11' * 5, 4094)",
                    "print(h.pread(9, 4092).hex())",
                    "");
            String out = ExternalTools.run(Map.of("uri", server.uri()), 30, python, "-c", script).assertOk("libnbd")
                    .stdout();
            assertEquals("0000" + "1111111111" + "0000\n", out);
            ByteBuffer check = ByteBuffer.allocate(4000);
            memory.readFully(check, 0);
            byte[] want = new byte[4000];
            java.util.Arrays.fill(want, 1000, 4000, (byte) 0xab);
            assertArrayEquals(want, check.array(), "the device holds the unaligned write");
        }
    }
}

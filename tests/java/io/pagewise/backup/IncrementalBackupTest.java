package io.pagewise.backup;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.CacheMode;
import io.pagewise.Extent;
import io.pagewise.cli.CommandRun;
import io.pagewise.backends.FileDevice;
import io.pagewise.cli.CopyCommand;
import io.pagewise.device.BlockDevice;
import io.pagewise.device.FilterDevice;
import io.pagewise.device.ZeroFlag;
import io.pagewise.filters.DirtyBitmapFilter;
import io.pagewise.nbd.NbdUri;
import io.pagewise.nbd.client.BlockStatus;
import io.pagewise.nbd.client.NbdClient;
import io.pagewise.nbd.server.NbdServer;
import io.pagewise.testing.ExternalTools;
import io.pagewise.testing.UnixSockets;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Dirty bitmaps over NBD and incremental copies, end to end: a pagewise server with a {@link DirtyBitmapFilter}
 * under a filter that counts the bytes read, read by pagewise's client, nbdinfo and qemu-img; a full copy, writes,
 * then {@code copy --changed} gives a byte-identical backup reading about what changed; and the same against
 * qemu-nbd -B on a qcow2 image with a persistent bitmap.
 */
@Timeout(120)
class IncrementalBackupTest {
    private static final long SIZE = 32L << 20;
    private static final long GRANULARITY = 64 << 10;
    private static final String CONTEXT = "qemu:dirty-bitmap:b1";

    @TempDir
    Path dir;
    private Path image;
    private FileDevice file;
    private DirtyBitmapFilter bitmapFilter;
    private final AtomicLong bytesRead = new AtomicLong();
    private NbdServer server;

    /** Counts what the clients read, above the bitmap, as a --filter would sit. */
    private final class CountingReads extends FilterDevice {
        CountingReads(BlockDevice device) {
            super(device);
        }

        @Override
        public void readFully(ByteBuffer dst, long offset) throws IOException {
            bytesRead.addAndGet(dst.remaining());
            super.readFully(dst, offset);
        }

        @Override
        public void readFully(ByteBuffer[] dsts, long offset) throws IOException {
            for (ByteBuffer b : dsts) bytesRead.addAndGet(b.remaining());
            super.readFully(dsts, offset);
        }
    }

    @BeforeEach
    void serve() throws IOException {
        image = dir.resolve("disk.img");
        byte[] data = new byte[8 << 20];
        new Random(1).nextBytes(data);
        try (var channel = Files.newByteChannel(image, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            channel.position(4 << 20);
            channel.write(ByteBuffer.wrap(data));
        }
        try (var raf = new java.io.RandomAccessFile(image.toFile(), "rw")) {
            raf.setLength(SIZE);
        }
        file = FileDevice.open(image, CacheMode.WRITEBACK, StandardOpenOption.READ, StandardOpenOption.WRITE);
        DirtyBitmap bitmap = DirtyBitmap.open(dir.resolve("disk.img.b1.bitmap"), "b1", image, SIZE, GRANULARITY);
        bitmapFilter = new DirtyBitmapFilter(file, bitmap);
        server = NbdServer.builder().export("", "disk", new CountingReads(bitmapFilter))
                .unixSocket(dir.resolve("nbd.sock")).start();
    }

    @AfterEach
    void stop() throws IOException {
        try {
            if (server != null) server.close();
        } finally {
            bitmapFilter.close();
        }
    }

    private String uri() {
        return server.uri();
    }

    /** Writes, zeroes and trims a few ranges through the server; returns the granules they touch. */
    private List<Extent> change(NbdClient nbd) throws IOException {
        byte[] text = new byte[10_000];
        new Random(2).nextBytes(text);
        nbd.write(ByteBuffer.wrap(text), 3L << 20, false);
        nbd.zero(6L << 20, 3 * GRANULARITY, ZeroFlag.NONE);
        nbd.write(ByteBuffer.wrap(text), (5L << 20) - 100, false); // across a granule boundary, in the random data
        if (nbd.info().canTrim()) nbd.trim(20L << 20, 1L << 20);
        nbd.flush();
        List<Extent> dirty = new ArrayList<>();
        dirty.add(new Extent(3L << 20, GRANULARITY, false));
        dirty.add(new Extent((5L << 20) - GRANULARITY, 2 * GRANULARITY, false));
        dirty.add(new Extent(6L << 20, 3 * GRANULARITY, false));
        if (nbd.info().canTrim()) dirty.add(new Extent(20L << 20, 1L << 20, false));
        return dirty;
    }

    /** The dirty runs of the whole export as the client reads them: offset and length of each. */
    private static List<Extent> dirtyRuns(NbdClient nbd) throws IOException {
        List<Extent> runs = new ArrayList<>();
        long at = 0;
        while (at < nbd.size()) {
            List<BlockStatus> statuses = nbd.blockStatus(CONTEXT, at, nbd.size() - at);
            assertTrue(!statuses.isEmpty(), "BLOCK_STATUS described nothing at " + at);
            for (BlockStatus s : statuses) {
                if ((s.flags() & 1) != 0) runs.add(new Extent(s.offset(), s.length(), false));
                at = s.end();
            }
        }
        return runs;
    }

    @Test
    void clientReadsTheBitmapBesideBaseAllocation() throws IOException {
        try (NbdClient nbd = NbdClient.connect(NbdUri.parse(uri()), 1, List.of(CONTEXT))) {
            assertEquals(List.of(), dirtyRuns(nbd), "a new bitmap is clean");
            List<Extent> expected = change(nbd);
            assertEquals(merge(expected), dirtyRuns(nbd));
            // base:allocation still answers, with its own chunk: the random data at 4 MiB is data.
            List<Extent> map = nbd.extents(4L << 20, 1L << 20);
            assertEquals(new Extent(4L << 20, 1L << 20, false), map.get(0));
        }
        try (NbdClient nbd = NbdClient.connect(NbdUri.parse(uri()), 1, List.of("qemu:dirty-bitmap:other"))) {
            throw new AssertionError("connected with a bitmap the server does not have");
        } catch (IOException e) {
            assertTrue(e.getMessage().contains("qemu:dirty-bitmap:other"), e.getMessage());
        }
    }

    @Test
    void incrementalCopyReadsOnlyTheChangesAndMatches() throws IOException {
        Path backup = dir.resolve("backup.img");
        assertEquals(0, copy(uri(), backup.toString()), "full copy");
        assertEquals(-1, Files.mismatch(image, backup));
        List<Extent> dirty;
        try (NbdClient nbd = NbdClient.connect(uri())) {
            dirty = change(nbd);
        }
        bytesRead.set(0);
        assertEquals(0, copy("--changed=b1", uri(), backup.toString()), "incremental copy");
        assertEquals(-1, Files.mismatch(image, backup), "the backup is the image after the incremental copy");
        long changed = dirty.stream().mapToLong(Extent::length).sum();
        assertTrue(bytesRead.get() <= changed && bytesRead.get() >= 10_000,
                "read " + bytesRead.get() + " bytes for " + changed + " bytes of changed granules");

        // A new generation: nothing changed, nothing read, still identical.
        bitmapFilter.bitmap().clear();
        bytesRead.set(0);
        assertEquals(0, copy("--changed=b1", uri(), backup.toString()));
        assertEquals(0, bytesRead.get());
        assertEquals(-1, Files.mismatch(image, backup));
    }

    @Test
    void changedNeedsAnExistingDestinationAndTheBitmap() throws IOException {
        String noDestination = copyRun("--changed=b1", uri(), dir.resolve("none.img").toString()).assertStatus(1).err();
        assertTrue(noDestination.contains("no such file"), noDestination);
        assertTrue(Files.notExists(dir.resolve("none.img")));
        Path backup = dir.resolve("backup.img");
        assertEquals(0, copy(uri(), backup.toString()));
        String noBitmap = copyRun("--changed=nope", uri(), backup.toString()).assertStatus(1).err();
        assertTrue(noBitmap.contains("qemu:dirty-bitmap:nope"), noBitmap);
        String fileSource = copyRun("--changed=b1", image.toString(), backup.toString()).assertStatus(2).err();
        assertTrue(fileSource.contains("SRC must be an NBD URI"), fileSource);
    }

    @Test
    void nbdinfoMapsTheBitmap() throws IOException {
        ExternalTools.require("nbdinfo");
        try (NbdClient nbd = NbdClient.connect(uri())) {
            change(nbd);
        }
        String out = ExternalTools.run(60, "nbdinfo", "--map=" + CONTEXT, uri()).assertOk("nbdinfo --map").stdout();
        List<Extent> dirty = new ArrayList<>();
        for (String line : out.strip().split("\n")) {
            String[] f = line.trim().split("\\s+");
            if (f[2].equals("1")) {
                assertEquals("dirty", f[3], line);
                dirty.add(new Extent(Long.parseLong(f[0]), Long.parseLong(f[1]), false));
            }
        }
        try (NbdClient nbd = NbdClient.connect(uri())) {
            assertEquals(merge(expectedDirty(nbd.info().canTrim())), dirty, out);
        }
        String list = ExternalTools.run(60, "nbdinfo", "--list", "--content", uri()).assertOk("nbdinfo --list").stdout();
        assertTrue(list.contains("base:allocation") && list.contains(CONTEXT), list);
    }

    @Test
    void qemuImgMapShowsDirtyRangesAsNoData() throws IOException {
        ExternalTools.require("qemu-img");
        boolean trims;
        try (NbdClient nbd = NbdClient.connect(uri())) {
            change(nbd);
            trims = nbd.info().canTrim();
        }
        String out = ExternalTools.run(60, "qemu-img", "map", "--output=json", "--image-opts",
                "driver=nbd,server.type=unix,server.path=" + dir.resolve("nbd.sock") + ",x-dirty-bitmap=" + CONTEXT)
                .assertOk("qemu-img map").stdout();
        // qemu-img reports the bitmap through its allocation map: a dirty range is "data": false.
        List<Extent> dirty = new ArrayList<>();
        java.util.regex.Matcher m = java.util.regex.Pattern.compile(
                "\"start\": (\\d+), \"length\": (\\d+),[^}]*\"data\": (true|false)").matcher(out);
        while (m.find()) {
            if (m.group(3).equals("false")) dirty.add(new Extent(Long.parseLong(m.group(1)), Long.parseLong(m.group(2)), false));
        }
        assertEquals(merge(expectedDirty(trims)), dirty, out);
    }

    @Test
    void incrementalCopyFromQemuNbdWithAPersistentBitmap() throws Exception {
        ExternalTools.require("qemu-img", "qemu-io", "qemu-nbd");
        Path qcow2 = dir.resolve("vm.qcow2");
        ExternalTools.run(60, "qemu-img", "create", "-q", "-f", "qcow2", qcow2.toString(), "16M").assertOk("qemu-img create");
        ExternalTools.run(60, "qemu-io", "-f", "qcow2", "-c", "write -P 0x11 0 4M", "-c", "write -P 0x33 8M 2M",
                qcow2.toString()).assertOk("qemu-io");
        Path backup = dir.resolve("vm.raw");
        ExternalTools.run(60, "qemu-img", "convert", "-f", "qcow2", "-O", "raw", qcow2.toString(), backup.toString())
                .assertOk("full backup");
        ExternalTools.run(60, "qemu-img", "bitmap", "--add", "-f", "qcow2", qcow2.toString(), "b0").assertOk("bitmap --add");
        ExternalTools.run(60, "qemu-io", "-f", "qcow2", "-c", "write -P 0x22 1M 64k", "-c", "write -z 8M 512k",
                "-c", "write -P 0x44 12M 100k", qcow2.toString()).assertOk("qemu-io changes");
        Path socket = dir.resolve("qemu.sock");
        Process qemuNbd = new ProcessBuilder("qemu-nbd", "-t", "-r", "-f", "qcow2", "-B", "b0", "-k", socket.toString(),
                qcow2.toString()).redirectErrorStream(true).redirectOutput(dir.resolve("qemu-nbd.log").toFile()).start();
        try {
            for (int i = 0; i < 100 && !UnixSockets.listening(socket); i++) Thread.sleep(100);
            assertTrue(UnixSockets.listening(socket), "qemu-nbd did not start: " + Files.readString(dir.resolve("qemu-nbd.log")));
            String qemuUri = "nbd+unix:///?socket=" + socket;
            try (NbdClient nbd = NbdClient.connect(NbdUri.parse(qemuUri), 1, List.of("qemu:dirty-bitmap:b0"))) {
                long dirty = 0;
                for (BlockStatus s : nbd.blockStatus("qemu:dirty-bitmap:b0", 0, nbd.size())) {
                    if ((s.flags() & 1) != 0) dirty += s.length();
                }
                assertTrue(dirty > 0 && dirty < 2L << 20, "qemu-nbd reports " + dirty + " dirty bytes");
            }
            assertEquals(0, copy("--changed=b0", qemuUri, backup.toString()), "incremental copy from qemu-nbd");
        } finally {
            qemuNbd.destroy();
            if (!qemuNbd.waitFor(10, TimeUnit.SECONDS)) qemuNbd.destroyForcibly().waitFor();
        }
        Path current = dir.resolve("vm-now.raw");
        ExternalTools.run(60, "qemu-img", "convert", "-f", "qcow2", "-O", "raw", qcow2.toString(), current.toString())
                .assertOk("qemu-img convert");
        assertEquals(-1, Files.mismatch(current, backup), "the incremental backup is the qcow2 image's contents");
    }

    private static List<Extent> expectedDirty(boolean trims) {
        List<Extent> dirty = new ArrayList<>();
        dirty.add(new Extent(3L << 20, GRANULARITY, false));
        dirty.add(new Extent((5L << 20) - GRANULARITY, 2 * GRANULARITY, false));
        dirty.add(new Extent(6L << 20, 3 * GRANULARITY, false));
        if (trims) dirty.add(new Extent(20L << 20, 1L << 20, false));
        return dirty;
    }

    /** Sorted, with neighbours joined: as a server merges runs of the same status. */
    private static List<Extent> merge(List<Extent> runs) {
        List<Extent> sorted = new ArrayList<>(runs);
        sorted.sort(java.util.Comparator.comparingLong(Extent::offset));
        List<Extent> merged = new ArrayList<>();
        for (Extent e : sorted) {
            Extent last = merged.isEmpty() ? null : merged.get(merged.size() - 1);
            if (last != null && last.end() >= e.offset()) {
                merged.set(merged.size() - 1, new Extent(last.offset(), Math.max(last.end(), e.end()) - last.offset(), false));
            } else {
                merged.add(e);
            }
        }
        return merged;
    }

    private static int copy(String... args) {
        return copyRun(args).status();
    }

    private static CommandRun copyRun(String... args) {
        return CommandRun.command("copy", args);
    }
}

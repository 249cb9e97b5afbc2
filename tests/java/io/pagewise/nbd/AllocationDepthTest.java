package io.pagewise.nbd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.CacheMode;
import io.pagewise.backends.FileDevice;
import io.pagewise.filters.CowFilter;
import io.pagewise.nbd.client.BlockStatus;
import io.pagewise.nbd.client.NbdClient;
import io.pagewise.nbd.server.NbdServer;
import io.pagewise.testing.ExternalTools;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * qemu:allocation-depth as qemu-nbd -A reports it: a raw file is depth 1 everywhere, holes included, exactly as
 * qemu-nbd says of the same file; a cow overlay's blocks are 1 and what reads through to the base 2; and the context
 * is offered only when asked for.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class AllocationDepthTest {
    private static final String DEPTH = "qemu:allocation-depth";
    private static final int MIB = 1 << 20;

    @TempDir
    Path dir;

    /** 8 MiB, data at 1 MiB and 5 MiB, holes elsewhere. */
    private Path image() throws IOException {
        Path image = dir.resolve("disk.raw");
        try (RandomAccessFile file = new RandomAccessFile(image.toFile(), "rw")) {
            file.setLength(8 * MIB);
            byte[] data = new byte[256 << 10];
            java.util.Arrays.fill(data, (byte) 7);
            file.seek(MIB);
            file.write(data);
            file.seek(5 * MIB);
            file.write(data);
        }
        return image;
    }

    private static List<String> map(String uri) throws IOException {
        String out = ExternalTools.run(60, "nbdinfo", "--map=" + DEPTH, uri).assertOk("nbdinfo --map=" + DEPTH).stdout();
        List<String> lines = new ArrayList<>();
        for (String line : out.strip().split("\n")) lines.add(line.trim().replaceAll("\\s+", " "));
        return lines;
    }

    @Test
    void aRawFileIsDepthOneEverywhereAsQemuNbdSays() throws Exception {
        ExternalTools.require("nbdinfo", "qemu-nbd");
        Path image = image();
        List<String> ours;
        try (FileDevice device = FileDevice.open(image, CacheMode.WRITEBACK);
             NbdServer server = NbdServer.builder().export("", device).allocationDepth(true)
                     .unixSocket(dir.resolve("nbd.sock")).start()) {
            ours = map(server.uri());
        }
        assertEquals(List.of("0 8388608 1 local"), ours);

        Path socket = dir.resolve("qemu.sock");
        Process qemuNbd = new ProcessBuilder("qemu-nbd", "-A", "-r", "-t", "-f", "raw", "-k", socket.toString(),
                image.toString()).redirectErrorStream(true).redirectOutput(dir.resolve("qemu-nbd.log").toFile()).start();
        try {
            for (int i = 0; i < 100 && !Files.exists(socket); i++) Thread.sleep(100);
            assertTrue(Files.exists(socket), "qemu-nbd did not start: " + Files.readString(dir.resolve("qemu-nbd.log")));
            assertEquals(map("nbd+unix:///?socket=" + socket), ours, "as qemu-nbd -A reports the same file");
        } finally {
            qemuNbd.destroy();
            if (!qemuNbd.waitFor(10, TimeUnit.SECONDS)) qemuNbd.destroyForcibly().waitFor();
        }
    }

    @Test
    void aCowOverlaysBlocksAreDepthOneAndTheBaseTwo() throws Exception {
        ExternalTools.require("nbdinfo");
        Path image = image();
        try (FileDevice base = FileDevice.open(image, CacheMode.WRITEBACK);
             CowFilter cow = CowFilter.temporary(base, 64 << 10);
             NbdServer server = NbdServer.builder().export("", cow).allocationDepth(true)
                     .unixSocket(dir.resolve("nbd.sock")).start()) {
            try (NbdClient client = NbdClient.connect(server.uri())) {
                client.write(ByteBuffer.allocate(100_000), 2 * MIB + 1000, false); // blocks 32..33 of 64 KiB
                client.zero(6 * MIB, MIB, io.pagewise.device.ZeroFlag.TRIM);
                client.flush();
            }
            assertEquals(List.of(
                    "0 2097152 2 backing depth 2",
                    "2097152 131072 1 local",
                    "2228224 4063232 2 backing depth 2",
                    "6291456 1048576 1 local",
                    "7340032 1048576 2 backing depth 2"), map(server.uri()));
            assertFalse(Files.readAllBytes(image)[2 * MIB + 1000] != 0, "the base is never written");

            // pagewise's own client, with base:allocation beside it: one chunk each.
            try (NbdClient client = NbdClient.connect(NbdUri.parse(server.uri()), 1, List.of(DEPTH))) {
                List<BlockStatus> depth = client.blockStatus(DEPTH, 2 * MIB, 2 * MIB);
                assertEquals(2 * MIB, depth.get(0).offset());
                assertEquals(131072, depth.get(0).length());
                assertEquals(1, depth.get(0).flags());
                assertEquals(2, depth.get(1).flags());
            }
        }
    }

    @Test
    void offeredOnlyWhenAskedFor() throws Exception {
        ExternalTools.require("nbdinfo");
        Path image = image();
        try (FileDevice device = FileDevice.open(image, CacheMode.WRITEBACK);
             NbdServer server = NbdServer.builder().export("", device).unixSocket(dir.resolve("nbd.sock")).start()) {
            String list = ExternalTools.run(60, "nbdinfo", "--list", "--content", server.uri()).assertOk("nbdinfo")
                    .stdout();
            assertTrue(list.contains("base:allocation"), list);
            assertFalse(list.contains(DEPTH), list);
        }
    }
}

package io.pagewise.nbd;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.pagewise.CacheMode;
import io.pagewise.nbd.client.NbdClient;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A DIRECT export advertises its O_DIRECT alignment as the minimum block size only when its size is a multiple of it:
 * the NBD spec wants the size a multiple of the minimum, and clients keeping to it (qemu, libnbd) could not write the
 * last bytes of a file of any other size.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class DirectBlockSizeTest {
    @TempDir
    Path dir;

    @Test
    void aDirectExportOfAnUnalignedSizeTakesAnyRequestAndSaysSo() throws Exception {
        long size = 1_000_001;
        try (TestServer server = TestServer.start(dir, size, CacheMode.DIRECT);
             NbdClient client = NbdClient.connect(server.uri())) {
            assertEquals(1, client.info().minimumBlock(), "minimum block of a " + size + "-byte DIRECT export");
            assertEquals(size, client.info().size());
            byte[] tail = "the last 22 bytes here".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
            client.write(ByteBuffer.wrap(tail), size - tail.length);
            client.flush();
            byte[] back = new byte[tail.length];
            client.read(ByteBuffer.wrap(back), size - tail.length);
            assertArrayEquals(tail, back);
        }
        byte[] onDisk = Files.readAllBytes(dir.resolve("disk.img"));
        assertEquals(size, onDisk.length);
        assertEquals('e', onDisk[(int) size - 1]);
    }

    @Test
    void aDirectExportOfAnAlignedSizeAdvertisesItsAlignment() throws Exception {
        try (TestServer server = TestServer.start(dir, 1 << 20, CacheMode.DIRECT);
             NbdClient client = NbdClient.connect(server.uri())) {
            int minimum = client.info().minimumBlock();
            assertEquals(server.export.file().requestAlignment(), minimum);
            assertEquals(0, minimum % 512, "the O_DIRECT alignment: " + minimum);
        }
    }
}

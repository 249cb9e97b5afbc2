package io.pagewise.backends;

import static io.pagewise.testing.TestData.random;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.Extent;
import io.pagewise.device.BlockDevice;
import io.pagewise.device.Capability;
import io.pagewise.device.DeviceException;
import io.pagewise.device.ZeroFlag;
import io.pagewise.filters.ReadOnlyFilter;
import io.pagewise.nbd.client.NbdClient;
import io.pagewise.nbd.server.NbdServer;
import io.pagewise.testing.ExternalTools;
import io.pagewise.testing.RecordingLogger;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * An NBD export as a device: a server serving an {@link NbdDevice} proxies another server (reads, writes, zeroing,
 * holes, read-only-ness and errors pass through), and requests longer than the server's maximum payload are split.
 */
@Timeout(60)
class NbdDeviceTest {
    private static final int SIZE = 4 << 20;

    @TempDir
    Path dir;

    private static RecordingLogger quiet() {
        return new RecordingLogger(null, System.Logger.Level.ERROR);
    }

    @Test
    void aServerOverAnNbdDeviceProxiesAnotherServer() throws Exception {
        Path image = dir.resolve("back.img");
        byte[] data = random(1, SIZE);
        Files.write(image, data);
        try (FileDevice disk = FileDevice.open(image, io.pagewise.CacheMode.WRITEBACK,
                     java.nio.file.StandardOpenOption.READ, java.nio.file.StandardOpenOption.WRITE);
             NbdServer back = NbdServer.builder().export("", disk).unixSocket(dir.resolve("back.sock")).logger(quiet())
                     .start();
             NbdDevice upstream = NbdDevice.connect(back.uri(), 2);
             NbdServer front = NbdServer.builder().export("", upstream).unixSocket(dir.resolve("front.sock"))
                     .logger(quiet()).start();
             NbdClient client = NbdClient.connect(front.uri())) {
            assertEquals(SIZE, client.size());
            assertTrue(client.info().canZero() && client.info().canTrim() && client.info().canFua(), client.info().toString());
            assertTrue(client.info().canExtents(), "base:allocation passes through");

            ByteBuffer read = ByteBuffer.allocate(65536);
            assertEquals(65536, client.read(read, 1 << 20));
            assertArrayEquals(Arrays.copyOfRange(data, 1 << 20, (1 << 20) + 65536), read.array(), "reads come from the back");

            byte[] written = random(2, 8192);
            client.write(ByteBuffer.wrap(written), 8192, true);
            client.zero(1 << 21, 1 << 20, ZeroFlag.TRIM);
            client.flush();
            byte[] now = Files.readAllBytes(image);
            assertArrayEquals(written, Arrays.copyOfRange(now, 8192, 16384), "writes reach the back server's file");
            assertArrayEquals(new byte[1 << 20], Arrays.copyOfRange(now, 1 << 21, 3 << 20), "zeroing too");
            List<Extent> map = client.extents(1 << 21, 1 << 20);
            assertTrue(map.get(0).hole(), "the punched range is a hole seen through both servers: " + map);
        }
    }

    @Test
    void readOnlyAndErrorsPassThrough() throws Exception {
        MemoryDevice memory = new MemoryDevice(SIZE);
        try (NbdServer back = NbdServer.builder().export("", new ReadOnlyFilter(memory)).unixSocket(dir.resolve("b.sock"))
                     .logger(quiet()).start();
             NbdDevice upstream = NbdDevice.connect(back.uri(), 1)) {
            assertFalse(upstream.capabilities().has(Capability.WRITE), "a read-only export is a read-only device");
            try (NbdServer front = NbdServer.builder().export("", upstream).unixSocket(dir.resolve("f.sock"))
                         .logger(quiet()).start();
                 NbdClient client = NbdClient.connect(front.uri())) {
                assertTrue(client.info().isReadOnly(), "and the proxy advertises it read-only");
            }
            DeviceException refused = assertThrows(DeviceException.class,
                    () -> upstream.write(ByteBuffer.allocate(512), 0, false));
            assertEquals(DeviceException.EPERM, refused.errno(), refused.getMessage());
        }
    }

    /**
     * A device that takes at most 1 MiB per call makes the server advertise that maximum, and the NBD device splits
     * longer reads and writes to keep within it (the server alone would pass a 4 MiB request on whole).
     */
    @Test
    void requestsLongerThanTheMaximumPayloadAreSplit() throws Exception {
        int size = 4 << 20;
        MemoryDevice memory = new MemoryDevice(size);
        byte[] data = random(3, size);
        memory.write(ByteBuffer.wrap(data), 0, false);
        java.util.concurrent.atomic.AtomicLong longest = new java.util.concurrent.atomic.AtomicLong();
        BlockDevice limited = new io.pagewise.device.FilterDevice(memory) {
            @Override public void readFully(ByteBuffer[] dsts, long offset) throws java.io.IOException {
                longest.accumulateAndGet(io.pagewise.internal.Buffers.remaining(dsts), Math::max);
                super.readFully(dsts, offset);
            }

            @Override public void write(ByteBuffer[] srcs, long offset, boolean fua) throws java.io.IOException {
                longest.accumulateAndGet(io.pagewise.internal.Buffers.remaining(srcs), Math::max);
                super.write(srcs, offset, fua);
            }

            @Override public int maximumBlockSize() { return 1 << 20; }
        };
        try (NbdServer server = NbdServer.builder().export("", limited).unixSocket(dir.resolve("s.sock"))
                     .logger(quiet()).start();
             NbdDevice device = NbdDevice.connect(server.uri(), 1)) {
            assertEquals(1 << 20, device.maximumBlockSize(), "the server advertises the device's maximum");
            ByteBuffer all = ByteBuffer.allocateDirect(size);
            device.readFully(all, 0);
            assertEquals(size, all.position());
            byte[] back = new byte[size];
            all.flip().get(back);
            assertArrayEquals(data, back, "one read of 4 MiB");

            byte[] other = random(4, size - 4096);
            ByteBuffer src = ByteBuffer.wrap(other);
            device.write(src, 4096, false);
            assertEquals(other.length, src.position());
            ByteBuffer check = ByteBuffer.allocate(other.length);
            memory.readFully(check, 4096);
            assertArrayEquals(other, check.array(), "one write of almost 4 MiB");
            assertEquals(1 << 20, longest.get(), "no call to the device was longer than its maximum");
        }
    }

    /** nbdcopy reads the proxy as it reads any server. */
    @Test
    void nbdcopyReadsThroughTheProxy() throws Exception {
        ExternalTools.require("nbdcopy");
        BlockDevice pattern = SyntheticDevices.pattern(SIZE);
        Path copy = dir.resolve("copy.img");
        try (NbdServer back = NbdServer.builder().export("", pattern).unixSocket(dir.resolve("b.sock")).logger(quiet())
                     .start();
             NbdDevice upstream = NbdDevice.connect(back.uri(), 1);
             NbdServer front = NbdServer.builder().export("", upstream).unixSocket(dir.resolve("f.sock"))
                     .logger(quiet()).start()) {
            ExternalTools.run(60, "nbdcopy", front.uri(), copy.toString()).assertOk("nbdcopy");
        }
        byte[] copied = Files.readAllBytes(copy);
        assertEquals(SIZE, copied.length);
        for (int i = 0; i < SIZE; i += 4093) {
            assertEquals(SyntheticDevices.patternByte(i), copied[i], "byte " + i);
        }
    }
}

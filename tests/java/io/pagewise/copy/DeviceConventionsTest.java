package io.pagewise.copy;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.CacheMode;
import io.pagewise.Extent;
import io.pagewise.backends.FileDevice;
import io.pagewise.backends.MemoryDevice;
import io.pagewise.backends.NbdDevice;
import io.pagewise.backends.SyntheticDevices;
import io.pagewise.device.BlockDevice;
import io.pagewise.device.Capabilities;
import io.pagewise.device.Capability;
import io.pagewise.nbd.server.NbdServer;
import io.pagewise.system.SystemCallFailure;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The devices keep FileChannel's buffer convention: readFully and write move the position to the limit; the Copier
 * refuses a device that does not.
 */
@Timeout(60)
class DeviceConventionsTest {
    private static final int SIZE = 1 << 20;

    @TempDir
    Path dir;

    @Test
    void everyDeviceMovesThePosition() throws Exception {
        byte[] data = new byte[SIZE];
        new Random(1).nextBytes(data);
        Path path = dir.resolve("source.img");
        Files.write(path, data);
        MemoryDevice memory = new MemoryDevice(SIZE);
        try (FileDevice file = FileDevice.openOrCreate(path, CacheMode.EVICT, SIZE);
             NbdServer server = NbdServer.builder().export("", memory).unixSocket(dir.resolve("s.sock"))
                     .logger(new io.pagewise.testing.RecordingLogger(null, System.Logger.Level.INFO)).start();
             NbdDevice nbd = NbdDevice.connect(server.uri(), 1)) {
            assertFalse(file.created(), "an existing file is opened, not created");
            List<BlockDevice> sources = new ArrayList<>(List.of(file, nbd, memory, SyntheticDevices.pattern(SIZE),
                    SyntheticDevices.zero(SIZE), SyntheticDevices.discard(SIZE)));
            for (BlockDevice source : sources) {
                ByteBuffer dst = ByteBuffer.allocate(8192).position(100);
                source.readFully(dst, 4096);
                assertEquals(8192, dst.position(), source.name() + ": readFully moves the position to the limit");
                ByteBuffer[] vector = {ByteBuffer.allocate(100).position(10), ByteBuffer.allocate(4000)};
                source.readFully(vector, 4096);
                assertEquals(100, vector[0].position(), source.name() + ": a vectored read fills every buffer");
                assertEquals(4000, vector[1].position(), source.name() + ": a vectored read fills every buffer");
            }
            for (BlockDevice destination : List.of(file, nbd, memory, SyntheticDevices.discard())) {
                assertTrue(destination.capabilities().has(Capability.WRITE), destination.name());
                ByteBuffer src = ByteBuffer.wrap(data, 10, 5000);
                destination.write(src, 8192, false);
                assertEquals(5010, src.position(), destination.name() + ": write moves the position to the limit");
            }
            ByteBuffer back = ByteBuffer.allocate(5000);
            nbd.readFully(back, 8192);
            assertArrayEquals(Arrays.copyOfRange(data, 10, 5010), back.array(), "NbdDevice wrote what it was given");
        }
    }

    /** A destination that cannot zero gets its zero ranges written as zeros; a read-only one is refused up front. */
    @Test
    void zerosAreWrittenAsDataWhereTheDestinationCannotZero() throws Exception {
        MemoryDevice memory = new MemoryDevice(SIZE);
        byte[] ones = new byte[SIZE];
        Arrays.fill(ones, (byte) 0xff);
        memory.write(ByteBuffer.wrap(ones), 0, false);
        BlockDevice noZero = new io.pagewise.device.FilterDevice(memory) {
            @Override public Capabilities capabilities() { return super.capabilities().without(Capability.ZERO); }

            @Override public void zero(long offset, long length, java.util.Set<io.pagewise.device.ZeroFlag> flags)
                    throws java.io.IOException {
                throw new java.io.IOException("zero called on a device that cannot zero");
            }
        };
        CopyResult result = new Copier(new CopyOptions()).copy(SyntheticDevices.zero(SIZE), noZero);
        assertEquals(SIZE, result.zeroedBytes());
        ByteBuffer back = ByteBuffer.allocate(SIZE);
        memory.readFully(back, 0);
        assertArrayEquals(new byte[SIZE], back.array(), "every byte was overwritten with zeros");

        CopyException readOnly = assertThrows(CopyException.class,
                () -> new Copier(new CopyOptions()).copy(SyntheticDevices.zero(SIZE), SyntheticDevices.pattern(SIZE)));
        assertTrue(readOnly.getMessage().contains("is read-only"), readOnly.getMessage());
    }

    /** A missing source is StorageFile's NoSuchFileException, with the errno, as everywhere else. */
    @Test
    void aMissingSourceIsNoSuchFileExceptionWithItsErrno() {
        Path missing = dir.resolve("missing.img");
        NoSuchFileException e = assertThrows(NoSuchFileException.class,
                () -> FileDevice.open(missing, CacheMode.EVICT));
        assertEquals("ENOENT", ((SystemCallFailure) e).errnoName());
        assertTrue(e.getMessage().contains(missing.toString()), e.getMessage());
    }

    /** A source that fills the buffer without moving its position must fail the copy, not copy stale bytes. */
    @Test
    void theCopierRefusesASourceThatLeavesThePositionBehind() {
        BlockDevice absolute = new BlockDevice() {
            @Override public String name() { return "absolute"; }
            @Override public long size() { return SIZE; }
            @Override public List<Extent> extents(long offset, long length, int maxExtents) { return List.of(new Extent(offset, length, false)); }
            @Override public void readFully(ByteBuffer dst, long offset) {
                for (int i = dst.position(); i < dst.limit(); i++) dst.put(i, (byte) 1);
            }
        };
        CopyException e = assertThrows(CopyException.class,
                () -> new Copier(new CopyOptions()).copy(absolute, SyntheticDevices.discard()));
        assertTrue(e.getMessage().contains("BlockDevice.readFully"), e.getMessage());
    }

    @Test
    void theCopierRefusesADestinationThatLeavesThePositionBehind() {
        BlockDevice absolute = new BlockDevice() {
            @Override public String name() { return "absolute"; }
            @Override public long size() { return SIZE; }
            @Override public void readFully(ByteBuffer dst, long offset) {}
            @Override public void write(ByteBuffer src, long offset, boolean fua) {}
            @Override public Capabilities capabilities() { return Capabilities.of(Capability.WRITE); }
        };
        CopyException e = assertThrows(CopyException.class,
                () -> new Copier(new CopyOptions()).copy(SyntheticDevices.pattern(SIZE), absolute));
        assertTrue(e.getMessage().contains("BlockDevice.write"), e.getMessage());
    }
}

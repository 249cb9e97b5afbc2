package io.pagewise.backends;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.CacheMode;
import io.pagewise.Extent;
import io.pagewise.device.BlockDevice;
import io.pagewise.device.Capabilities;
import io.pagewise.device.Capability;
import io.pagewise.device.DeviceException;
import io.pagewise.device.ZeroFlag;
import io.pagewise.filters.ReadOnlyFilter;
import java.nio.ByteBuffer;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** What each device says it can do, and does: created files, synthetic data, memory, and the read-only filter. */
@Timeout(30)
class DevicesTest {
    @TempDir
    Path dir;

    @Test
    void aCreatedFileStartsZeroedAndAnOpenedOneDoesNot() throws Exception {
        Path path = dir.resolve("new.img");
        try (FileDevice created = FileDevice.create(path, CacheMode.WRITEBACK, 1 << 20)) {
            assertTrue(created.created() && created.capabilities().has(Capability.STARTS_ZEROED), created.toString());
            assertEquals(1 << 20, created.size());
            assertTrue(created.capabilities().asSet().containsAll(Set.of(Capability.WRITE, Capability.ZERO,
                    Capability.FLUSH)), created.capabilities().toString());
        }
        assertThrows(FileAlreadyExistsException.class, () -> FileDevice.create(path, CacheMode.WRITEBACK, 4096));
        try (FileDevice opened = FileDevice.openOrCreate(path, CacheMode.WRITEBACK, 4096)) {
            assertFalse(opened.created() || opened.capabilities().has(Capability.STARTS_ZEROED),
                    "an existing file may hold anything");
            assertEquals(1 << 20, opened.size(), "openOrCreate keeps an existing file's size");
        }
        try (FileDevice readOnly = FileDevice.open(path, CacheMode.WRITEBACK)) {
            assertEquals(Capabilities.NONE, readOnly.capabilities().without(Capability.EXTENTS, Capability.HOLES,
                    Capability.CACHE, Capability.MULTI_CONN), "no options means READ");
        }
        IllegalArgumentOrIo.check(() -> FileDevice.open(dir, CacheMode.WRITEBACK), "Is a directory (EISDIR)");
    }

    @Test
    void syntheticDevicesReadWhatTheirNamesSay() throws Exception {
        BlockDevice pattern = SyntheticDevices.pattern(1 << 16);
        ByteBuffer words = ByteBuffer.allocate(24);
        pattern.readFully(words, 8);
        assertEquals(8, words.getLong(0));
        assertEquals(16, words.getLong(8));
        assertEquals(24, words.getLong(16));
        ByteBuffer odd = ByteBuffer.allocate(3);
        pattern.readFully(odd, 13);
        assertArrayEquals(new byte[] {SyntheticDevices.patternByte(13), SyntheticDevices.patternByte(14),
                SyntheticDevices.patternByte(15)}, odd.array());
        assertFalse(pattern.capabilities().has(Capability.WRITE));

        BlockDevice zero = SyntheticDevices.zero(1 << 16);
        assertEquals(List.of(new Extent(0, 1 << 16, true)), zero.extents(0, 1 << 16, 4));
        assertEquals(Capabilities.of(Capability.STARTS_ZEROED, Capability.EXTENTS, Capability.HOLES,
                Capability.MULTI_CONN), zero.capabilities());

        BlockDevice discard = SyntheticDevices.discard();
        assertEquals(Long.MAX_VALUE, discard.size());
        ByteBuffer src = ByteBuffer.allocate(100);
        discard.write(src, 1 << 40, true);
        assertEquals(100, src.position());
        discard.zero(0, 1 << 30, ZeroFlag.of(true, true, true));
    }

    @Test
    void memoryZeroesAndTheReadOnlyFilterRefusesChanges() throws Exception {
        MemoryDevice memory = new MemoryDevice(8192);
        memory.write(ByteBuffer.wrap(new byte[] {1, 2, 3, 4}), 100, false);
        memory.zero(101, 2, ZeroFlag.NONE);
        ByteBuffer back = ByteBuffer.allocate(4);
        memory.readFully(back, 100);
        assertArrayEquals(new byte[] {1, 0, 0, 4}, back.array());

        BlockDevice readOnly = new ReadOnlyFilter(memory);
        assertEquals(Capabilities.of(Capability.MULTI_CONN), readOnly.capabilities());
        assertEquals(DeviceException.EPERM, assertThrows(DeviceException.class,
                () -> readOnly.write(ByteBuffer.allocate(1), 0, false)).errno());
        assertEquals(DeviceException.EPERM, assertThrows(DeviceException.class,
                () -> readOnly.zero(0, 1, ZeroFlag.TRIM)).errno());
        assertEquals(DeviceException.EPERM, assertThrows(DeviceException.class,
                () -> readOnly.trim(0, 1, false)).errno());
        ByteBuffer through = ByteBuffer.allocate(4);
        readOnly.readFully(through, 100);
        assertArrayEquals(new byte[] {1, 0, 0, 4}, through.array(), "reads pass through");
    }

    /** Vectored I/O on memory: each buffer takes the bytes where the one before it ended, reading as writing. */
    @Test
    void memoryWritesAndReadsBufferAfterBuffer() throws Exception {
        MemoryDevice memory = new MemoryDevice(8192);
        memory.write(new ByteBuffer[] {ByteBuffer.wrap(new byte[] {1, 2}), ByteBuffer.allocate(0),
                ByteBuffer.wrap(new byte[] {3, 4, 5})}, 1000, false);
        ByteBuffer whole = ByteBuffer.allocate(7);
        memory.readFully(whole, 999);
        assertArrayEquals(new byte[] {0, 1, 2, 3, 4, 5, 0}, whole.array());

        ByteBuffer first = ByteBuffer.allocate(3);
        ByteBuffer second = ByteBuffer.allocate(2);
        memory.readFully(new ByteBuffer[] {first, ByteBuffer.allocate(0), second}, 1000);
        assertArrayEquals(new byte[] {1, 2, 3}, first.array());
        assertArrayEquals(new byte[] {4, 5}, second.array());
        assertFalse(first.hasRemaining() || second.hasRemaining(), "every buffer filled");
    }

    /** A failure whose message must say something. */
    private interface IllegalArgumentOrIo {
        void run() throws Exception;

        static void check(IllegalArgumentOrIo body, String text) {
            Exception e = assertThrows(Exception.class, body::run);
            assertTrue(String.valueOf(e.getMessage()).contains(text), e.toString());
        }
    }
}

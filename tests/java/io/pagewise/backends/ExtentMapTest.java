package io.pagewise.backends;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.pagewise.CacheMode;
import io.pagewise.Extent;
import io.pagewise.Native;
import io.pagewise.StorageFile;
import io.pagewise.device.ZeroFlag;
import io.pagewise.testing.ExternalTools;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The runs a writable FileDevice learns of its file: answered from memory, whole, and never older than the device's
 * own writes, zeroes and trims; a read-only device asks the file every time, so another program's writes show.
 */
@Timeout(30)
class ExtentMapTest {
    private static final int MIB = 1 << 20;

    @TempDir
    Path dir;

    @Test
    void lookupClipsMergesAndStopsAtGapsAndAtTheLimit() {
        ExtentMap map = new ExtentMap();
        assertNull(map.lookup(0, 10, 64), "nothing known");
        map.learn(List.of(new Extent(100, 50, false), new Extent(150, 50, true), new Extent(200, 100, false)),
                map.changes());
        assertEquals(List.of(new Extent(120, 30, false), new Extent(150, 50, true), new Extent(200, 10, false)),
                map.lookup(120, 90, 64));
        assertEquals(List.of(new Extent(120, 30, false), new Extent(150, 50, true)), map.lookup(120, 90, 2),
                "the first runs, as StorageFile.extents gives them");
        assertNull(map.lookup(250, 100, 64), "runs past 300 are not known");
        assertNull(map.lookup(50, 100, 64), "nor before 100");
        map.learn(List.of(new Extent(300, 100, false)), map.changes());
        assertEquals(List.of(new Extent(250, 100, false)), map.lookup(250, 100, 64), "adjacent data runs merge");
    }

    @Test
    void aChangeForgetsItsNeighbourhoodAndRunsAskedBeforeItAreNotKept() {
        ExtentMap map = new ExtentMap();
        long before = map.changes();
        map.forget(0, 10); // a write while the runs were being asked of the file
        map.learn(List.of(new Extent(0, 100, true)), before);
        assertNull(map.lookup(0, 10, 64), "runs asked before a change may be older than it");
        map.learn(List.of(new Extent(0, 100, true), new Extent(100L << 20, 100, true)), map.changes());
        map.forget(50, 1);
        assertNull(map.lookup(0, 10, 64));
        assertEquals(List.of(new Extent(100L << 20, 10, true)), map.lookup(100L << 20, 10, 64), "far runs stay");
        map.clear();
        assertNull(map.lookup(100L << 20, 10, 64));
    }

    @Test
    void aWritableDeviceSeesItsOwnWritesZeroesAndTrims() throws Exception {
        if (!Native.isAvailable()) ExternalTools.unavailable("native library not loaded", "holes are found by lseek");
        Path file = sparse();
        try (FileDevice device = FileDevice.open(file, CacheMode.WRITEBACK, StandardOpenOption.READ,
                StandardOpenOption.WRITE)) {
            assertEquals(List.of(new Extent(2 * MIB, 4096, true)), device.extents(2 * MIB, 4096, 64));
            device.write(ByteBuffer.allocateDirect(4096).put(0, (byte) 9), 2 * MIB, false);
            assertEquals(List.of(new Extent(2 * MIB, 4096, false)), device.extents(2 * MIB, 4096, 64));
            ByteBuffer back = ByteBuffer.allocateDirect(4096);
            device.readFully(back, 2 * MIB);
            assertEquals(9, back.get(0));

            assertEquals(List.of(new Extent(0, MIB, false)), device.extents(0, MIB, 64));
            device.zero(0, MIB, java.util.EnumSet.of(ZeroFlag.MAY_TRIM));
            assertEquals(List.of(new Extent(0, MIB, true)), device.extents(0, MIB, 64));
            device.write(ByteBuffer.allocateDirect(MIB), 0, false);
            assertEquals(List.of(new Extent(0, MIB, false)), device.extents(0, MIB, 64));
            device.trim(0, MIB, false);
            assertEquals(List.of(new Extent(0, MIB, true)), device.extents(0, MIB, 64));
        }
    }

    @Test
    void aReadOnlyDeviceSeesAnotherProgramsWrites() throws Exception {
        if (!Native.isAvailable()) ExternalTools.unavailable("native library not loaded", "holes are found by lseek");
        Path file = sparse();
        try (FileDevice device = FileDevice.open(file, CacheMode.WRITEBACK, StandardOpenOption.READ)) {
            assertEquals(List.of(new Extent(2 * MIB, 4096, true)), device.extents(2 * MIB, 4096, 64));
            try (RandomAccessFile other = new RandomAccessFile(file.toFile(), "rw")) {
                other.seek(2 * MIB);
                other.write(new byte[4096]);
            }
            assertEquals(List.of(new Extent(2 * MIB, 4096, false)), device.extents(2 * MIB, 4096, 64));
        }
    }

    /**
     * Two writable devices of one file (two exports of it, a hard link served twice): what one writes into a hole
     * the other must not read as zeros, nor report as a hole, though it learned the hole before; nor may a device
     * over the caller's own StorageFile write behind an owning device's back. After both close, a new device learns
     * afresh.
     */
    @Test
    void writableDevicesOfOneFileForgetWhatEachOtherWrites() throws Exception {
        if (!Native.isAvailable()) ExternalTools.unavailable("native library not loaded", "holes are found by lseek");
        Path file = sparse();
        Path link = dir.resolve("link.img");
        Files.createLink(link, file);
        ByteBuffer back = ByteBuffer.allocateDirect(4096);
        try (FileDevice first = FileDevice.open(file, CacheMode.WRITEBACK, StandardOpenOption.READ,
                StandardOpenOption.WRITE);
             FileDevice second = FileDevice.open(link, CacheMode.WRITEBACK, StandardOpenOption.READ,
                     StandardOpenOption.WRITE);
             StorageFile kept = StorageFile.open(file, CacheMode.WRITEBACK, StandardOpenOption.READ,
                     StandardOpenOption.WRITE);
             FileDevice over = FileDevice.of(kept)) {
            assertEquals(List.of(new Extent(2 * MIB, 4096, true)), first.extents(2 * MIB, 4096, 64));
            second.write(ByteBuffer.allocateDirect(4096).put(0, (byte) 9), 2 * MIB, false);
            assertEquals(List.of(new Extent(2 * MIB, 4096, false)), first.extents(2 * MIB, 4096, 64));
            first.readFully(back.clear(), 2 * MIB);
            assertEquals(9, back.get(0));

            assertEquals(List.of(new Extent(4 * MIB, 4096, true)), first.extents(4 * MIB, 4096, 64));
            over.write(ByteBuffer.allocateDirect(4096).put(0, (byte) 5), 4 * MIB, false);
            assertEquals(List.of(new Extent(4 * MIB, 4096, false)), first.extents(4 * MIB, 4096, 64));
        }
        try (RandomAccessFile other = new RandomAccessFile(file.toFile(), "rw")) {
            other.seek(8 * MIB);
            other.write(new byte[4096]);
        }
        try (FileDevice later = FileDevice.open(file, CacheMode.WRITEBACK, StandardOpenOption.READ,
                StandardOpenOption.WRITE)) {
            assertEquals(List.of(new Extent(8 * MIB, 4096, false)), later.extents(8 * MIB, 4096, 64),
                    "a device opened after the others closed does not inherit what they learned");
        }
    }

    /** 16 MiB: data in the first MiB, holes after it. */
    private Path sparse() throws Exception {
        Path file = dir.resolve("sparse.img");
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
            raf.setLength(16 * MIB);
            raf.write(new byte[MIB]);
        }
        return file;
    }
}

package io.pagewise.backup;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.CacheMode;
import io.pagewise.Extent;
import io.pagewise.backends.FileDevice;
import io.pagewise.backends.MemoryDevice;
import io.pagewise.device.ZeroFlag;
import io.pagewise.filters.DirtyBitmapFilter;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** What a dirty bitmap records, what it keeps across a clean close, and when it stops vouching for the image. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class DirtyBitmapTest {
    private static final int G = 64 << 10;

    @TempDir
    Path dir;

    /** The changed runs as [offset, end) pairs. */
    static List<long[]> changed(DirtyBitmap bitmap) {
        List<long[]> runs = new ArrayList<>();
        for (Extent e : bitmap.runs(0, bitmap.imageSize(), Integer.MAX_VALUE)) {
            if (!e.hole()) runs.add(new long[] {e.offset(), e.end()});
        }
        return runs;
    }

    static String text(List<long[]> runs) {
        StringBuilder s = new StringBuilder();
        for (long[] r : runs) s.append('[').append(r[0]).append(',').append(r[1]).append(')');
        return s.toString();
    }

    @Test
    void writesZeroesAndTrimsAreRecordedAtTheGranularity() throws IOException {
        long size = 100L * G + 512;
        try (DirtyBitmapFilter device = new DirtyBitmapFilter(new MemoryDevice((int) size),
                DirtyBitmap.open(dir.resolve("b.bitmap"), "b", null, size, G))) {
            assertEquals("", text(changed(device.bitmap())), "a new bitmap starts clean");
            device.write(ByteBuffer.allocate(10), G + 5, false);          // chunk 1
            device.zero(10 * G - 1, 2, ZeroFlag.NONE);                     // chunks 9 and 10
            device.write(new ByteBuffer[] {ByteBuffer.allocate(G), ByteBuffer.allocate(1)}, 20 * G, false); // 20, 21
            device.trim(size - 1, 1, false);                               // the short last chunk, 100
            assertEquals("[65536,131072)[589824,720896)[1310720,1441792)[6553600," + size + ")",
                    text(changed(device.bitmap())));
            List<Extent> two = device.bitmap().runs(0, size, 2);
            assertEquals(List.of(new Extent(0, G, true), new Extent(G, G, false)), two, "at most maxRuns runs");
        }
    }

    @Test
    void aCleanCloseKeepsTheBitsAndClearStartsANewGeneration() throws IOException {
        Path image = dir.resolve("disk.img");
        long size = 64 * G;
        try (RandomAccessFile f = new RandomAccessFile(image.toFile(), "rw")) {
            f.setLength(size);
        }
        Path file = dir.resolve("disk.bitmap");
        try (DirtyBitmapFilter device = new DirtyBitmapFilter(FileDevice.open(image, CacheMode.WRITEBACK,
                StandardOpenOption.READ, StandardOpenOption.WRITE), DirtyBitmap.open(file, "nightly", image, size, G))) {
            device.write(ByteBuffer.allocate(100), 3 * G, false);
            assertEquals(1, device.bitmap().generation());
        }
        try (DirtyBitmap again = DirtyBitmap.open(file, "nightly", image, size, G)) {
            assertTrue(again.isValid());
            assertEquals("[196608,262144)", text(changed(again)));
            again.clear();
            assertEquals("", text(changed(again)));
            assertEquals(2, again.generation());
        }
        try (DirtyBitmap third = DirtyBitmap.open(file, "nightly", image, size, G)) {
            assertEquals(2, third.generation());
            assertEquals("", text(changed(third)), "the clear was saved");
        }
        IOException otherName = assertThrows(IOException.class, () -> DirtyBitmap.open(file, "weekly", image, size, G));
        assertTrue(otherName.getMessage().contains("holds bitmap 'nightly', not 'weekly'"), otherName.getMessage());
        IOException otherGranularity = assertThrows(IOException.class,
                () -> DirtyBitmap.open(file, "nightly", image, size, 2 * G));
        assertTrue(otherGranularity.getMessage().contains("granularity of 65536 bytes, not 131072"),
                otherGranularity.getMessage());
    }

    @Test
    void anImageChangedWhileNoBitmapRecordedMakesItInvalid() throws IOException {
        Path image = dir.resolve("disk.img");
        long size = 16 * G;
        Files.write(image, new byte[(int) size]);
        Path file = dir.resolve("disk.bitmap");
        DirtyBitmap.open(file, "b", image, size, G).close();
        // Someone writes the image without the bitmap: its modification time moves.
        try (RandomAccessFile f = new RandomAccessFile(image.toFile(), "rw")) {
            f.write(1);
        }
        Files.setLastModifiedTime(image, FileTime.fromMillis(Files.getLastModifiedTime(image).toMillis() + 5000));
        try (DirtyBitmap bitmap = DirtyBitmap.open(file, "b", image, size, G)) {
            assertFalse(bitmap.isValid());
            assertEquals(List.of(new Extent(0, size, false)), bitmap.runs(0, size, 100), "everything changed");
            bitmap.clear();
            assertTrue(bitmap.isValid(), "a new generation vouches again");
        }
        // A bitmap kept for an image of another size cannot vouch either.
        try (DirtyBitmap bitmap = DirtyBitmap.open(file, "b", image, size / 2, G)) {
            assertFalse(bitmap.isValid());
        }
    }

    @Test
    void aDamagedHeaderIsRefusedByName() throws IOException {
        Path file = dir.resolve("damaged.bitmap");
        DirtyBitmap.open(file, "b", null, 16 * G, G).close();
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
            f.seek(100);
            f.write(0x55);
        }
        IOException e = assertThrows(IOException.class, () -> DirtyBitmap.open(file, "b", null, 16 * G, G));
        assertTrue(e.getMessage().contains(file + ": not a pagewise dirty bitmap, or its header is damaged"),
                e.getMessage());
        assertTrue(e.getMessage().contains("delete the file to start a new bitmap"), e.getMessage());
    }

    /** A bitmap file cut short (a full disk, a partial copy) is refused with its length, not taken as a new bitmap. */
    @Test
    void aCutShortFileIsRefusedWithItsLength() throws IOException {
        for (long length : new long[] {0, 100, 4096 + 3}) {
            Path file = dir.resolve("short-" + length + ".bitmap");
            DirtyBitmap.open(file, "b", null, 64 * G, G).close(); // 64 chunks: 8 bytes of bits after the header
            try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
                f.setLength(length);
            }
            IOException e = assertThrows(IOException.class, () -> DirtyBitmap.open(file, "b", null, 64 * G, G),
                    "a bitmap file of " + length + " bytes");
            assertTrue(e.getMessage().contains(file + " is " + length + " bytes long, shorter than"), e.getMessage());
            assertTrue(e.getMessage().contains("cut short"), e.getMessage());
            assertTrue(e.getMessage().contains("delete the file to start a new bitmap"), e.getMessage());
            assertEquals(length, Files.size(file), "the refused file is left as it was");
        }
    }

    /** Two openers would save their bits over each other's: the second is refused while the first holds it. */
    @Test
    void aBitmapIsKeptByOneOpenerAtATime() throws IOException {
        Path file = dir.resolve("once.bitmap");
        try (DirtyBitmap first = DirtyBitmap.open(file, "b", null, 16 * G, G)) {
            IOException e = assertThrows(IOException.class, () -> DirtyBitmap.open(file, "b", null, 16 * G, G));
            assertTrue(e.getMessage().contains(file + " is already open in this process"), e.getMessage());
            assertTrue(first.isValid());
        }
        DirtyBitmap.open(file, "b", null, 16 * G, G).close(); // free again once closed
    }

    /** A device given as the bitmap file is refused before anything is written to it. */
    @Test
    void aDeviceIsNoBitmapFile() {
        IOException e = assertThrows(IOException.class, () -> DirtyBitmap.open(Path.of("/dev/null"), "b", null, 16 * G, G));
        assertTrue(e.getMessage().contains("/dev/null: a dirty bitmap is kept in a regular file"), e.getMessage());
    }

    /** A change that is in progress when clear() is called ends up recorded in one generation or the other. */
    @Test
    void clearWaitsForChangesInProgress() throws Exception {
        try (DirtyBitmap bitmap = DirtyBitmap.open(dir.resolve("c.bitmap"), "c", null, 16 * G, G)) {
            CountDownLatch recorded = new CountDownLatch(1);
            CountDownLatch finish = new CountDownLatch(1);
            Thread writer = new Thread(() -> {
                try {
                    bitmap.record(0, 1, () -> {
                        recorded.countDown();
                        await(finish);
                    });
                } catch (IOException e) {
                    throw new RuntimeException(e);
                }
            });
            writer.start();
            assertTrue(recorded.await(10, TimeUnit.SECONDS));
            Thread clearer = new Thread(() -> {
                try {
                    bitmap.clear();
                } catch (IOException e) {
                    throw new RuntimeException(e);
                }
            });
            clearer.start();
            clearer.join(300);
            assertTrue(clearer.isAlive(), "clear() waits while the change is being made");
            finish.countDown();
            clearer.join(10_000);
            writer.join(10_000);
            assertEquals("", text(changed(bitmap)), "the change was made before the new generation began");
            bitmap.record(0, 1, () -> { });
            assertEquals("[0,65536)", text(changed(bitmap)));
        }
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Test
    void badArgumentsAreNamed() {
        IllegalArgumentException g = assertThrows(IllegalArgumentException.class,
                () -> DirtyBitmap.open(dir.resolve("x"), "x", null, G, 1000));
        assertTrue(g.getMessage().contains("granularity 1000"), g.getMessage());
        IllegalArgumentException tooMany = assertThrows(IllegalArgumentException.class,
                () -> DirtyBitmap.open(dir.resolve("x"), "x", null, 1L << 50, 512));
        assertTrue(tooMany.getMessage().contains("too small for an image"), tooMany.getMessage());
    }
}

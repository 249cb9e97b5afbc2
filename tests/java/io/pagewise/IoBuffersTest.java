package io.pagewise;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.testing.ExternalTools;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * IoBuffers: buffers of exactly the size asked, zeroed and usable for O_DIRECT; the large ones in transparent huge
 * pages where the kernel allows them, and unmapped again once unreachable. Runs through JNI and, in the FFM suite,
 * through FFM.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class IoBuffersTest {
    private static final int MIB = 1 << 20;

    @TempDir
    Path dir;

    @Test
    void buffersHaveTheSizeAskedAndAreZeroedAndUsableForDirectIo() throws IOException {
        Path path = dir.resolve("direct.raw");
        int[] sizes = {1, 4096, 100_000, 256 << 10, 300 << 10, MIB, 3 * MIB + 4096};
        try (StorageFile file = StorageFile.open(path, CacheMode.DIRECT, StandardOpenOption.CREATE,
                StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            for (int size : sizes) {
                ByteBuffer buffer = IoBuffers.allocate(size);
                assertTrue(buffer.isDirect(), "direct");
                assertEquals(size, buffer.capacity(), "capacity");
                assertEquals(0, buffer.position());
                assertEquals(size, buffer.limit());
                assertEquals(ByteOrder.BIG_ENDIAN, buffer.order());
                for (int i = 0; i < size; i++) assertEquals(0, buffer.get(i), "byte " + i + " of " + size);
                if (size % 4096 != 0) continue;
                for (int i = 0; i < size; i++) buffer.put(i, (byte) (i * 31 + size));
                assertEquals(size, file.write(buffer.clear(), 0), "written");
                ByteBuffer back = IoBuffers.allocate(size);
                file.readFully(back, 0);
                assertEquals(buffer.clear(), back.clear(), size + "-byte buffer written and read back");
            }
        }
        assertThrows(IllegalArgumentException.class, () -> IoBuffers.allocate(0));
    }

    @Test
    void largeBuffersGetTransparentHugePages() throws Exception {
        if (!Native.isAvailable()) {
            ExternalTools.unavailable("no native library: IoBuffers has no huge pages", "the library must load");
            return;
        }
        String setting = Files.readString(Path.of("/sys/kernel/mm/transparent_hugepage/enabled"));
        if (setting.contains("[never]")) {
            ExternalTools.unavailable("transparent huge pages are off here (" + setting.trim() + ")",
                    "CI machines have them on madvise");
            return;
        }
        settle(); // unmaps what earlier tests left unreachable, so that it does not hide what is mapped here
        long before = anonHugePagesKib();
        List<ByteBuffer> held = new ArrayList<>();
        for (int i = 0; i < 16; i++) {
            ByteBuffer buffer = IoBuffers.allocate(MIB);
            for (int at = 0; at < MIB; at += 4096) buffer.put(at, (byte) 1);
            held.add(buffer);
        }
        long gained = anonHugePagesKib() - before;
        // 16 MiB of 1 MiB buffers, two to a huge page; a few may fall back to small pages when memory is fragmented.
        assertTrue(gained >= 8 * 1024, "AnonHugePages grew by " + gained + " KiB for 16 MiB of buffers");
        assertEquals(16, held.size());
    }

    @Test
    void memoryIsUnmappedOnceNoBufferReachesIt() throws Exception {
        if (!mapsMemory()) return;
        long before = settledVirtualKib();
        List<ByteBuffer> held = new ArrayList<>();
        for (int i = 0; i < 64; i++) {
            held.add(IoBuffers.allocate(4 * MIB));
            held.add(IoBuffers.allocate(256 << 10)); // slices of shared huge pages, too
        }
        long mapped = virtualKib() - before;
        assertTrue(mapped >= 200 * 1024, "272 MiB of buffers mapped only " + mapped + " KiB");
        ByteBuffer slice = held.get(1).slice(4096, 4096);
        held.clear();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        long left = mapped;
        while (System.nanoTime() < deadline) {
            System.gc();
            Thread.sleep(100);
            left = virtualKib() - before;
            if (left < 64 * 1024) break;
        }
        assertTrue(left < 64 * 1024, "still mapped " + left + " KiB of " + mapped + " after the buffers went");
        slice.put(0, (byte) 7); // a slice kept keeps its memory
        assertEquals(7, slice.get(0));
    }

    @Test
    void buffersOfManySizesShareHugePages() throws Exception {
        if (!mapsMemory()) return;
        long before = settledVirtualKib();
        List<ByteBuffer> held = new ArrayList<>();
        long asked = 0;
        for (int i = 0; i < 64; i++) {
            int size = (256 << 10) + 4096 * i; // 64 sizes, 24 MiB in all
            held.add(IoBuffers.allocate(size));
            asked += size;
        }
        long mapped = virtualKib() - before;
        // A slab of its own for each size would map 128 MiB.
        assertTrue(mapped <= 40 * 1024, "64 buffers of " + asked / 1024 + " KiB in all mapped " + mapped + " KiB");
        assertEquals(64, held.size());
    }

    /** Whether IoBuffers maps memory here; where it cannot, says so (and fails under CI). */
    private static boolean mapsMemory() {
        if (Native.isAvailable()) return true;
        ExternalTools.unavailable("no native library: IoBuffers maps nothing", "the library must load");
        return false;
    }

    /** The process's mapped memory once what earlier tests left unreachable is unmapped. */
    private static long settledVirtualKib() throws Exception {
        settle();
        return virtualKib();
    }

    private static void settle() throws InterruptedException {
        for (int i = 0; i < 3; i++) {
            System.gc();
            Thread.sleep(100);
        }
    }

    private static long anonHugePagesKib() throws IOException {
        return statusField(Path.of("/proc/self/smaps_rollup"), "AnonHugePages:");
    }

    private static long virtualKib() throws IOException {
        return statusField(Path.of("/proc/self/status"), "VmSize:");
    }

    private static long statusField(Path file, String name) throws IOException {
        for (String line : Files.readAllLines(file)) {
            if (line.startsWith(name)) return Long.parseLong(line.substring(name.length()).trim().split("\\s+")[0]);
        }
        throw new IOException("no " + name + " in " + file);
    }
}

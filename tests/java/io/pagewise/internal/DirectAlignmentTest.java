package io.pagewise.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.Native;
import io.pagewise.system.Alignment;
import io.pagewise.testing.ExternalTools;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The O_DIRECT alignment used where statx(STATX_DIOALIGN) reports nothing (Linux before 6.1): the logical block size
 * of the device holding the file, checked against what this kernel's statx answers for the same file.
 */
class DirectAlignmentTest {
    @TempDir
    Path dir;

    @Test
    void theFallbackIsTheLogicalBlockSizeThatStatxReports() throws Exception {
        if (!Native.isAvailable()) ExternalTools.unavailable("native library not loaded", "O_DIRECT needs it");
        Path file = dir.resolve("direct.img");
        Files.write(file, new byte[1 << 20]);
        int fd = FileDescriptors.open(file, FileDescriptors.DIRECT);
        assertTrue(fd >= 0, "open O_DIRECT: " + fd);
        try {
            long[] stat = new long[6];
            assertEquals(0, FileDescriptors.stat(fd, stat));
            int[] reported = new int[2];
            assertEquals(0, FileDescriptors.directAlignment(fd, reported));
            Alignment fallback = NativeRawFile.alignment(new int[2], stat);
            if (reported[1] > 0) {
                assertEquals(reported[1], fallback.offset(), "offset alignment: statx says " + reported[1]);
                assertTrue(fallback.memory() % reported[0] == 0, fallback + " vs statx memory alignment " + reported[0]);
                assertEquals(new Alignment(reported[0], reported[1], fallback.logicalBlockSize()),
                        NativeRawFile.alignment(reported, stat), "what statx reports wins");
            }
            // Whatever the file system, I/O at the fallback alignment works.
            int block = fallback.offset();
            ByteBuffer buffer = BufferPool.aligned(4 * block);
            assertEquals(0, buffer.alignmentOffset(0, fallback.memory()));
            assertEquals(2 * block, PositionalIo.read(fd, IoVector.of(buffer.limit(2 * block), block), 0, null));
        } finally {
            FileDescriptors.close(fd);
        }
    }
}

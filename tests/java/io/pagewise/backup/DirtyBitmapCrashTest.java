package io.pagewise.backup;

import static io.pagewise.testing.TestData.sparseFile;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.testing.ExternalTools;
import io.pagewise.testing.LazyFsExtension;
import io.pagewise.testing.LazyFsMount;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * A dirty bitmap never misses a change, however the process ends: killed with SIGKILL while four threads write, and
 * at a power cut (LazyFS) while four threads make durable (FUA) writes. Every chunk of the image that changed is
 * marked in what the bitmap file holds afterwards, or the bitmap says it is invalid. The writer is a child process
 * ({@link BitmapWriterProbe}), so that the power cut finds it stopped (SIGSTOP), as a real one would, and nothing it
 * does after the cut reaches the disk.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class DirtyBitmapCrashTest {
    @RegisterExtension
    static final LazyFsExtension LAZYFS = new LazyFsExtension();

    /** Sparse, so that unchanged chunks read as zeros; large, so that most writes dirty a new chunk. */
    private static final long SIZE = 1L << 30;
    private static final long G = DirtyBitmap.DEFAULT_GRANULARITY;
    private static final int WRITES = 600;

    @TempDir
    Path dir;

    @Test
    void sigkillWhileWritingMissesNothing() throws Exception {
        Path image = sparseImage(dir.resolve("disk.img"));
        Path bitmap = dir.resolve("disk.bitmap");
        DirtyBitmap.open(bitmap, "crash", image, SIZE, G).close(); // an earlier clean run: a valid, empty bitmap
        Process writer = startWriter(image, bitmap, false);
        try {
            awaitWrites(writer);
        } finally {
            writer.destroyForcibly();
            assertTrue(writer.waitFor(30, TimeUnit.SECONDS), "the writer ended");
        }
        assertNoChangeMissed(image, bitmap, image, "after SIGKILL");
    }

    @Test
    void aPowerCutWhileWritingDurablyMissesNothing() throws Exception {
        LazyFsMount lazyfs = LAZYFS.mount();
        // Made in the backing directory, not through the mount: LazyFS would cache the whole truncated gigabyte,
        // and with its cache full it writes through, so that nothing would be lost at the cut.
        sparseImage(lazyfs.backing("disk.img"));
        DirtyBitmap.open(lazyfs.file("disk.bitmap"), "crash", lazyfs.file("disk.img"), SIZE, G).close();
        Process writer = startWriter(lazyfs.file("disk.img"), lazyfs.file("disk.bitmap"), true);
        try {
            awaitWrites(writer);
            signal(writer, "STOP");
            lazyfs.powerCut();
        } finally {
            writer.destroyForcibly();
            assertTrue(writer.waitFor(30, TimeUnit.SECONDS), "the writer ended");
        }
        Path survivedBitmap = dir.resolve("survived.bitmap");
        Files.copy(lazyfs.backing("disk.bitmap"), survivedBitmap, StandardCopyOption.REPLACE_EXISTING);
        assertNoChangeMissed(lazyfs.backing("disk.img"), survivedBitmap, null, "after a power cut");
    }

    /**
     * After SIGKILL, the bits stand when nothing else wrote the image before the next open, and the bitmap is
     * invalid when something did: the image's modification time is later than the last change the bitmap recorded.
     */
    @Test
    void afterSigkillTheBitsStandUnlessSomeoneElseChangedTheImage() throws Exception {
        for (String after : new String[] {"nothing", "someone else writes", "an older copy is put back"}) {
            boolean someoneElseWrites = !after.equals("nothing");
            Path image = sparseImage(dir.resolve("idle-" + after.replace(' ', '-') + ".img"));
            Path bitmap = dir.resolve("idle-" + after.replace(' ', '-') + ".bitmap");
            DirtyBitmap.open(bitmap, "crash", image, SIZE, G).close();
            Process writer = startWriter(image, bitmap, false, WRITES);
            try {
                awaitWrites(writer); // all its writes made; the writer now idles, holding the bitmap open
                IOException held = assertThrows(IOException.class, () -> DirtyBitmap.open(bitmap, "crash", image, SIZE, G));
                assertTrue(held.getMessage().contains("in use by another process"), held.getMessage());
                Thread.sleep(20);
            } finally {
                writer.destroyForcibly();
                assertTrue(writer.waitFor(30, TimeUnit.SECONDS), "the writer ended");
            }
            if (someoneElseWrites) {
                Thread.sleep(20);
                try (FileChannel other = FileChannel.open(image, StandardOpenOption.WRITE)) {
                    other.write(ByteBuffer.wrap(new byte[] {1, 2, 3}), SIZE / 2 + 12345);
                }
                if (after.equals("an older copy is put back")) { // as cp -p or rsync -a leave it: the copy's old time
                    Files.setLastModifiedTime(image, FileTime.fromMillis(System.currentTimeMillis() - 3_600_000));
                }
            }
            try (DirtyBitmap reopened = DirtyBitmap.open(bitmap, "crash", image, SIZE, G)) {
                assertEquals(!someoneElseWrites, reopened.isValid(), "valid after SIGKILL, then " + after);
            }
            if (!someoneElseWrites) assertNoChangeMissed(image, bitmap, image, "after SIGKILL of an idle writer");
        }
    }

    private static Path sparseImage(Path path) throws IOException {
        return sparseFile(path, SIZE);
    }

    private static Process startWriter(Path image, Path bitmap, boolean fua) throws IOException {
        return startWriter(image, bitmap, fua, Long.MAX_VALUE);
    }

    private static Process startWriter(Path image, Path bitmap, boolean fua, long limit) throws IOException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        // As java -jar with the jar's manifest: no JVM warning on JDK 24+ about native access (JDK 17 takes it too).
        return new ProcessBuilder(java, "--enable-native-access=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"),
                BitmapWriterProbe.class.getName(),
                image.toString(), bitmap.toString(), fua ? "fua" : "buffered", String.valueOf(limit))
                .redirectErrorStream(true).start();
    }

    /** Reads the writer's lines until it has written {@link #WRITES} times; its output pipe stays open. */
    private static void awaitWrites(Process writer) throws IOException {
        BufferedReader out = new BufferedReader(new InputStreamReader(writer.getInputStream(), StandardCharsets.UTF_8));
        int writes = 0;
        for (String line; writes < WRITES && (line = out.readLine()) != null; ) {
            if (!line.equals("wrote")) throw new AssertionError("the writer failed: " + line);
            writes++;
        }
        assertEquals(WRITES, writes, "the writer's writes before it ended");
    }

    private static void signal(Process process, String signal) throws IOException {
        ExternalTools.run(10, "kill", "-" + signal, String.valueOf(process.pid())).assertOk("kill -" + signal);
    }

    /** Fails when a chunk of the image holds data (it started all zeros) but is not marked, unless the bitmap is invalid. */
    private static void assertNoChangeMissed(Path imageAfter, Path bitmapFile, Path image, String when)
            throws IOException {
        List<Long> changed = new ArrayList<>();
        try (FileChannel channel = FileChannel.open(imageAfter)) {
            ByteBuffer chunk = ByteBuffer.allocate((int) G);
            ByteBuffer zeros = ByteBuffer.allocate((int) G);
            for (long c = 0; c < SIZE / G; c++) {
                chunk.clear();
                while (chunk.hasRemaining() && channel.read(chunk, c * G + chunk.position()) > 0) { }
                if (chunk.flip().mismatch(zeros.clear()) >= 0) changed.add(c);
            }
        }
        assertTrue(changed.size() > 100, when + ": the writer changed " + changed.size() + " chunks, too few to tell");
        try (DirtyBitmap bitmap = DirtyBitmap.open(bitmapFile, "crash", image, SIZE, G)) {
            if (!bitmap.isValid()) return; // it says so: the next backup copies everything
            List<Long> missed = new ArrayList<>();
            for (long c : changed) {
                if (bitmap.runs(c * G, G, 1).get(0).hole()) missed.add(c);
            }
            assertTrue(missed.isEmpty(), () -> when + ": " + missed.size() + " of " + changed.size()
                    + " changed chunks are not marked, the first " + missed.get(0));
        }
    }
}

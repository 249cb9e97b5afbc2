package io.pagewise.testing;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The power-loss harness itself: a cut loses what was only written and keeps what was synced, so a power-loss test
 * that stays green means the code synced, not that the cut did nothing.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class LazyFsMountTest {
    @TempDir
    static Path dir;
    private static LazyFsMount lazyfs;

    @BeforeAll
    static void mount() throws Exception {
        lazyfs = LazyFsMount.mount(dir);
    }

    @AfterAll
    static void unmount() {
        if (lazyfs != null) lazyfs.close();
    }

    private static byte[] random(long seed, int length) {
        byte[] data = new byte[length];
        new Random(seed).nextBytes(data);
        return data;
    }

    @Test
    void aCutLosesUnsyncedWritesAndKeepsSyncedOnes() throws Exception {
        byte[] old = random(1, 1 << 16);
        Files.write(lazyfs.backing("unsynced"), old);
        Files.write(lazyfs.backing("synced"), old);
        byte[] fresh = random(2, 1 << 16);
        try (FileChannel unsynced = FileChannel.open(lazyfs.file("unsynced"), StandardOpenOption.WRITE);
             FileChannel synced = FileChannel.open(lazyfs.file("synced"), StandardOpenOption.WRITE)) {
            assertArrayEquals(old, Files.readAllBytes(lazyfs.file("unsynced")), "the backing file is the mount's file");
            unsynced.write(ByteBuffer.wrap(fresh), 0);
            synced.write(ByteBuffer.wrap(fresh), 0);
            synced.force(false);
            lazyfs.powerCut();
            assertArrayEquals(old, Files.readAllBytes(lazyfs.backing("unsynced")), "an unsynced write survived the cut");
            assertArrayEquals(fresh, Files.readAllBytes(lazyfs.backing("synced")), "a synced write was lost");
        }
    }

    @Test
    void aCutLosesAnUnsyncedAppendAndItsSize() throws Exception {
        Files.write(lazyfs.backing("append"), random(3, 4096));
        try (FileChannel file = FileChannel.open(lazyfs.file("append"), StandardOpenOption.WRITE)) {
            file.write(ByteBuffer.wrap(random(4, 1000)), 4096);
            assertEquals(5096, Files.size(lazyfs.file("append")));
            lazyfs.powerCut();
            assertEquals(4096, Files.size(lazyfs.backing("append")), "an unsynced append survived the cut");
        }
    }

    @Test
    void closeUnmountsAndDeletesEverything() throws Exception {
        Path own = Files.createDirectory(dir.resolve("own"));
        LazyFsMount other = LazyFsMount.mount(own);
        Path mountpoint = other.mountpoint();
        Files.write(other.file("x"), new byte[] {1, 2, 3});
        other.close();
        other.close();
        assertFalse(Files.readString(Path.of("/proc/self/mountinfo")).contains(" " + mountpoint + " "), "still mounted");
        try (var left = Files.list(own)) {
            assertEquals("[]", Arrays.toString(left.toArray()), "left behind");
        }
        assertTrue(Files.isDirectory(own));
    }
}

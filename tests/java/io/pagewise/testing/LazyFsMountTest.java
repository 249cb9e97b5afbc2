package io.pagewise.testing;

import static io.pagewise.testing.TestData.random;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;
import org.junit.platform.launcher.listeners.TestExecutionSummary;

/**
 * The power-loss harness itself: a cut loses what was only written and keeps what was synced, so a power-loss test
 * that stays green means the code synced, not that the cut did nothing.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class LazyFsMountTest {
    @RegisterExtension
    static final LazyFsExtension LAZYFS = new LazyFsExtension();

    @TempDir
    static Path dir;

    @Test
    void aCutLosesUnsyncedWritesAndKeepsSyncedOnes() throws Exception {
        LazyFsMount lazyfs = LAZYFS.mount();
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
        LazyFsMount lazyfs = LAZYFS.mount();
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
        LazyFsMount other = LazyFsMount.mount(own, ExternalTools::unavailable);
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

    /** Run only through the launcher below (surefire leaves nested classes out): fails with the mount in use. */
    static class FailsWhileMounted {
        @RegisterExtension
        static final LazyFsExtension LAZYFS = new LazyFsExtension();
        static volatile Path mountpoint;

        @Test
        void failsWithAFileOpenOnTheMount() throws Exception {
            mountpoint = LAZYFS.mount().mountpoint();
            FileChannel open = FileChannel.open(LAZYFS.mount().file("held"), StandardOpenOption.CREATE_NEW,
                    StandardOpenOption.WRITE);
            open.write(ByteBuffer.wrap(new byte[] {1, 2, 3}));
            fail("fails on purpose, the file left open");
        }
    }

    @Test
    void theExtensionUnmountsAndDeletesAfterAFailedTest() throws Exception {
        LAZYFS.mount(); // skips (or fails on CI) here, not in the class below, without LazyFS
        SummaryGeneratingListener listener = new SummaryGeneratingListener();
        LauncherFactory.create().execute(LauncherDiscoveryRequestBuilder.request()
                .selectors(selectClass(FailsWhileMounted.class)).build(), listener);
        TestExecutionSummary summary = listener.getSummary();
        assertEquals(1, summary.getTestsFailedCount(), "the class's one test fails");
        Path mountpoint = FailsWhileMounted.mountpoint;
        assertNotNull(mountpoint, "the failing test mounted");
        assertFalse(Files.readString(Path.of("/proc/self/mountinfo")).contains(" " + mountpoint + " "), "still mounted");
        Path madeByTheExtension = mountpoint.getParent().getParent();
        assertFalse(Files.exists(madeByTheExtension), madeByTheExtension + " is left behind");
    }
}

package io.pagewise.policy;

import static io.pagewise.testing.TestData.random;
import static java.nio.file.StandardOpenOption.CREATE_NEW;
import static java.nio.file.StandardOpenOption.READ;
import static java.nio.file.StandardOpenOption.WRITE;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.CacheMode;
import io.pagewise.PageCache;
import io.pagewise.Residency;
import io.pagewise.StorageFile;
import io.pagewise.internal.FileDescriptors;
import io.pagewise.internal.IoVector;
import io.pagewise.internal.NativeRawFile;
import io.pagewise.internal.RawFile;
import io.pagewise.testing.ExternalTools;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * DONTCACHE writes go as EVICT's do, at any number of writers: RWF_DONTCACHE writes of whole 2 MiB windows made
 * every request's p99 latency 2.7-5 times O_DIRECT's under heavy writes (docs/BENCHMARKS.md), and kept up to a few
 * hundred MiB in the page cache until their writeback completed. Whole-window writes from aligned direct buffers go
 * by O_DIRECT, so none of their pages is cached even right after the write; reads of whole windows stay RWF_DONTCACHE.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class DontcacheWritesTest {
    private static final int WINDOW = 2 << 20;
    private static final int WRITERS = 8;
    private static final int WINDOWS_PER_WRITER = 8;

    @TempDir
    Path dir;

    @Test
    void concurrentWholeWindowWritesAreNeverCachedAndLeaveAtMostOnePercent() throws Exception {
        ExternalTools.requireNativeLibrary();
        Path path = dir.resolve("written.raw");
        long regionBytes = (long) WINDOWS_PER_WRITER * WINDOW;
        byte[][] data = new byte[WRITERS][];
        for (int w = 0; w < WRITERS; w++) data[w] = random(100 + w, (int) regionBytes);
        List<String> cachedRightAfter = new ArrayList<>();
        try (StorageFile file = StorageFile.open(path, CacheMode.DONTCACHE, CREATE_NEW, READ, WRITE)) {
            ExecutorService pool = Executors.newFixedThreadPool(WRITERS);
            try {
                List<Future<?>> writers = new ArrayList<>();
                for (int w = 0; w < WRITERS; w++) {
                    int writer = w;
                    writers.add(pool.submit(() -> {
                        ByteBuffer buffer = windowBuffer();
                        for (int i = 0; i < WINDOWS_PER_WRITER; i++) {
                            long at = writer * regionBytes + (long) i * WINDOW;
                            buffer.clear().put(data[writer], i * WINDOW, WINDOW).flip();
                            file.write(buffer, at);
                            Residency just = file.residency(at, WINDOW);
                            if (just.residentPages() > 0) {
                                synchronized (cachedRightAfter) {
                                    cachedRightAfter.add("window at " + at + ": " + just);
                                }
                            }
                        }
                        return null;
                    }));
                }
                for (Future<?> writer : writers) writer.get(1, TimeUnit.MINUTES);
            } finally {
                pool.shutdownNow();
            }
            assertEquals(CacheMode.DONTCACHE, file.cacheMode(), "this kernel and file system take RWF_DONTCACHE");
            assertTrue(cachedRightAfter.isEmpty(), () -> cachedRightAfter.size() + " of " + WRITERS * WINDOWS_PER_WRITER
                    + " whole windows were cached right after their write, e.g. " + cachedRightAfter.get(0));

            ByteBuffer window = ByteBuffer.allocateDirect(WINDOW);
            long before = file.stats().dontcacheReads();
            file.readFully(window, 3L * WINDOW);
            assertEquals(before + 1, file.stats().dontcacheReads(), "a whole-window read is one RWF_DONTCACHE read");
        }
        Residency after = PageCache.residency(path);
        assertTrue(after.residentPages() <= after.totalPages() / 100, "cached after close: " + after);
        byte[] written = Files.readAllBytes(path);
        for (int w = 0; w < WRITERS; w++) {
            byte[] region = new byte[(int) regionBytes];
            System.arraycopy(written, (int) (w * regionBytes), region, 0, region.length);
            assertArrayEquals(data[w], region, "writer " + w + "'s region");
        }
    }

    /**
     * On an asynchronous ring too: a whole-window write from an aligned direct buffer is EVICT's one O_DIRECT write
     * (the second descriptor, no RWF_DONTCACHE), where it ran blocking on a pool thread as an uncached write before.
     * Reads are still the policy's own (null: it decides per request whether to read uncached).
     */
    @Test
    void asynchronousWholeWindowWritesTakeEvictsRouteByODirect() throws Exception {
        ExternalTools.requireNativeLibrary();
        Path path = dir.resolve("routes.raw");
        try (RawFile file = NativeRawFile.open(path, FileDescriptors.READ_WRITE | FileDescriptors.CREATE
                | CachePolicy.openFlags(CacheMode.DONTCACHE))) {
            CachePolicy policy = CachePolicy.create(CacheMode.DONTCACHE, file);
            try {
                ByteBuffer window = windowBuffer();
                RingRoute route = policy.ringRoute(IoVector.of(window, WINDOW), true, false);
                assertNotNull(route, "a whole-window write runs on the ring");
                try {
                    assertNotEquals(file.descriptor(), route.descriptor(), "by the O_DIRECT descriptor");
                    assertEquals(0, route.flags() & RawFile.DONTCACHE, "without RWF_DONTCACHE");
                } finally {
                    route.done();
                }
                assertNull(policy.ringRoute(IoVector.of(window.clear(), WINDOW), false, false), "reads");
            } finally {
                policy.close();
            }
        }
    }

    /** Through StorageFile.writeAsync: 16 whole windows in flight at once land, and none is cached once done. */
    @Test
    void asynchronousWholeWindowWritesLandUncached() throws Exception {
        ExternalTools.requireNativeLibrary();
        Path path = dir.resolve("async.raw");
        int windows = 16;
        byte[] data = random(7, windows * WINDOW);
        try (StorageFile file = StorageFile.open(path, CacheMode.DONTCACHE, CREATE_NEW, READ, WRITE)) {
            List<CompletableFuture<Integer>> writes = new ArrayList<>();
            for (int i = 0; i < windows; i++) {
                ByteBuffer buffer = windowBuffer();
                buffer.put(data, i * WINDOW, WINDOW).flip();
                writes.add(file.writeAsync(buffer, (long) i * WINDOW));
            }
            for (CompletableFuture<Integer> write : writes) assertEquals(WINDOW, write.get(1, TimeUnit.MINUTES));
            Residency done = file.residency(0, (long) windows * WINDOW);
            assertEquals(0, done.residentPages(), "cached once the writes completed: " + done);
        }
        Residency after = PageCache.residency(path);
        assertTrue(after.residentPages() <= after.totalPages() / 100, "cached after close: " + after);
        assertArrayEquals(data, Files.readAllBytes(path));
    }

    /** A direct buffer of one window, aligned to a window. */
    private static ByteBuffer windowBuffer() {
        return ByteBuffer.allocateDirect(2 * WINDOW).alignedSlice(WINDOW).limit(WINDOW).slice();
    }
}

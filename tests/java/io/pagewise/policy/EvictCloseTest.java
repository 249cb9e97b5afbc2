package io.pagewise.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.PageCache;
import io.pagewise.internal.Advice;
import io.pagewise.internal.IoVector;
import io.pagewise.internal.NativeRawFile;
import io.pagewise.internal.RawFile;
import io.pagewise.system.Alignment;
import io.pagewise.testing.ExternalTools;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * EVICT's close drops again what its first drop left: pages that readahead still holds locked when the last
 * request ends survive fadvise(DONTNEED). Here a file whose first DONTNEEDs at close do nothing stands in for them.
 */
@Timeout(value = 1, unit = TimeUnit.MINUTES)
class EvictCloseTest {
    private static final int MIB = 1 << 20;

    @TempDir
    Path dir;

    @Test
    void closeDropsAgainWhatTheFirstDropLeft() throws IOException {
        ExternalTools.requireNativeLibrary();
        Path path = dir.resolve("data");
        byte[] bytes = new byte[24 * MIB];
        new Random(1).nextBytes(bytes);
        Files.write(path, bytes);
        try (RawFile raw = NativeRawFile.open(path, 0)) {
            raw.dataSync();
            raw.advise(0, bytes.length, Advice.DONTNEED);
        }
        assertEquals(0, PageCache.residency(path).residentPages(), "the file should start uncached");

        try (RawFile raw = NativeRawFile.open(path, 0)) {
            MissingDrops file = new MissingDrops(raw);
            EvictPolicy policy = new EvictPolicy(file);
            ByteBuffer buffer = ByteBuffer.allocateDirect(MIB);
            for (long at = 0; at < bytes.length; at += MIB) {
                policy.read(IoVector.of(new ByteBuffer[] {buffer.clear()}, at));
            }
            assertTrue(PageCache.residency(path).residentPages() > 0, "the last windows are still cached before close");
            file.missNext.set(1_000); // every drop that close makes at first leaves the pages
            file.missUntilResidencyAsked = true;
            policy.close();
            assertTrue(file.dropsMissed.get() > 0, "the test should have made drops miss");
        }
        assertEquals(0, PageCache.residency(path).residentPages(), "pages left cached after close");
    }

    /**
     * A window retired long ago, past its second drop, is no longer tracked; should pages of it be cached again
     * (its drops met folios a concurrent reader held), close still leaves none of ours anywhere in the file. Here a
     * read through another descriptor after every window has been retired and rechecked stands in for them.
     */
    @Test
    void closeLeavesNoPageOfOursOutsideTheTrackedWindows() throws IOException {
        ExternalTools.requireNativeLibrary();
        long windows = EvictPolicy.ACTIVE_WINDOWS + EvictPolicy.RECHECK_WINDOWS + 4;
        long size = windows * EvictPolicy.WINDOW;
        Path path = uncachedRandomFile("long", size, 2);
        assertEquals(0, PageCache.residency(path).residentPages(), "the file should start uncached");

        try (RawFile raw = NativeRawFile.open(path, 0)) {
            EvictPolicy policy = new EvictPolicy(raw);
            ByteBuffer buffer = ByteBuffer.allocateDirect(MIB);
            for (long at = 0; at < size; at += MIB) policy.read(IoVector.of(new ByteBuffer[] {buffer.clear()}, at));
            try (java.nio.channels.FileChannel other = java.nio.channels.FileChannel.open(path)) {
                other.read(ByteBuffer.allocate((int) EvictPolicy.WINDOW), 0); // window 0 cached again, untracked
            }
            assertTrue(PageCache.residency(path).residentPages() >= EvictPolicy.WINDOW / 4096,
                    "window 0 should be cached again before close");
            policy.close();
        }
        assertEquals(0, PageCache.residency(path).residentPages(), "pages left cached after close");
    }

    /**
     * Close sweeps only the windows the policy went through: what another reader cached elsewhere in the file after
     * it was opened is that reader's, and stays (a backup in EVICT beside a database must not drop the database's
     * hot pages when it closes its file).
     */
    @Test
    void closeLeavesWhatOthersCachedElsewhereSinceOpen() throws IOException {
        ExternalTools.requireNativeLibrary();
        long size = 64L * MIB;
        Path path = uncachedRandomFile("shared", size, 3);
        try (RawFile raw = NativeRawFile.open(path, 0)) {
            EvictPolicy policy = new EvictPolicy(raw);
            policy.read(IoVector.of(new ByteBuffer[] {ByteBuffer.allocateDirect(MIB)}, 40L * MIB));
            try (java.nio.channels.FileChannel other = java.nio.channels.FileChannel.open(path)) {
                ByteBuffer buffer = ByteBuffer.allocate(MIB);
                for (long at = 0; at < 16L * MIB; at += MIB) other.read(buffer.clear(), at);
            }
            policy.close();
        }
        long othersPages = PageCache.residency(path, 0, 16L * MIB).residentPages();
        assertTrue(othersPages >= 16L * MIB / 4096 * 9 / 10, "the other reader's pages stay cached: " + othersPages);
        assertEquals(0, PageCache.residency(path, 32L * MIB, 32L * MIB).residentPages(), "the policy's own are dropped");
    }

    /**
     * Sequential readahead submits its next window when the reader reaches the current one's last part, so its pages
     * can lie up to twice the readahead past the last read; where the reader stops before a hole (which the NBD
     * server answers without reading), nothing later touches them. Close drops those too. Here, with a readahead of
     * 4 MiB, a WILLNEED from another descriptor 6 to 8 MiB past the last read stands in for them: past what one
     * readahead plus a window reaches, within twice that.
     */
    @Test
    void closeDropsReadaheadUpToTwiceItsSizePastTheLastRead() throws IOException {
        ExternalTools.requireNativeLibrary();
        Path path = uncachedRandomFile("before-a-hole", 32L * MIB, 4);
        try (RawFile raw = NativeRawFile.open(path, 0)) {
            MissingDrops file = new MissingDrops(raw);
            file.readahead = 4L * MIB;
            EvictPolicy policy = new EvictPolicy(file);
            ByteBuffer buffer = ByteBuffer.allocateDirect(MIB);
            for (long at = 0; at < 8L * MIB; at += MIB) policy.read(IoVector.of(new ByteBuffer[] {buffer.clear()}, at));
            try (RawFile other = NativeRawFile.open(path, 0)) {
                other.advise(14L * MIB, 2L * MIB, Advice.WILLNEED);
            }
            long before = PageCache.residency(path, 14L * MIB, 2L * MIB).residentPages();
            assertTrue(before > 0, "readahead's stand-in should be cached before close: " + before);
            policy.close();
        }
        assertEquals(0, PageCache.residency(path, 14L * MIB, 2L * MIB).residentPages(),
                "pages 6 to 8 MiB past the last read left cached after close");
    }

    /** A new file of random data (from seed), on disk and dropped from the cache. */
    private Path uncachedRandomFile(String name, long size, long seed) throws IOException {
        Path path = dir.resolve(name);
        try (java.nio.channels.FileChannel out = java.nio.channels.FileChannel.open(path,
                java.nio.file.StandardOpenOption.CREATE_NEW, java.nio.file.StandardOpenOption.WRITE)) {
            ByteBuffer chunk = ByteBuffer.allocate(4 * MIB);
            new Random(seed).nextBytes(chunk.array());
            for (long at = 0; at < size; at += chunk.capacity()) out.write(chunk.clear(), at);
            out.force(false);
        }
        try (RawFile raw = NativeRawFile.open(path, 0)) {
            raw.advise(0, size, Advice.DONTNEED);
        }
        return path;
    }

    /**
     * A file on which DONTNEED does nothing while missNext is positive, until someone asks how many pages are
     * cached (as EVICT's close does before it drops again): the drops of a moment when readahead held the pages.
     */
    private static final class MissingDrops implements RawFile {
        final RawFile file;
        final AtomicInteger missNext = new AtomicInteger();
        final AtomicInteger dropsMissed = new AtomicInteger();
        volatile boolean missUntilResidencyAsked;
        /** The device's readahead as the policy is told it, or -1 for the real one. */
        long readahead = -1;

        MissingDrops(RawFile file) {
            this.file = file;
        }

        @Override
        public void advise(long offset, long length, int advice) throws IOException {
            if (advice == Advice.DONTNEED && missNext.getAndDecrement() > 0) {
                dropsMissed.incrementAndGet();
                return;
            }
            file.advise(offset, length, advice);
        }

        @Override
        public long residentPages(long offset, long length) throws IOException {
            if (missUntilResidencyAsked) missNext.set(0);
            return file.residentPages(offset, length);
        }

        @Override public Path path() { return file.path(); }
        @Override public long readaheadBytes() { return readahead >= 0 ? readahead : file.readaheadBytes(); }
        @Override public boolean isNative() { return file.isNative(); }
        @Override public long read(IoVector request, int flags) throws IOException { return file.read(request, flags); }
        @Override public void write(IoVector request, int flags) throws IOException { file.write(request, flags); }
        @Override public void dataSync() throws IOException { file.dataSync(); }
        @Override public void syncRange(long offset, long length, int flags) throws IOException { file.syncRange(offset, length, flags); }
        @Override public long size() throws IOException { return file.size(); }
        @Override public void truncate(long size) throws IOException { file.truncate(size); }
        @Override public boolean fallocate(int mode, long offset, long length) throws IOException { return file.fallocate(mode, offset, length); }
        @Override public long seek(long offset, int whence) throws IOException { return file.seek(offset, whence); }
        @Override public byte[] residentBitmap(long offset, long length) throws IOException { return file.residentBitmap(offset, length); }
        @Override public long cachedPages(long offset, long length) throws IOException { return file.cachedPages(offset, length); }
        @Override public boolean isBlockDevice() { return file.isBlockDevice(); }
        @Override public boolean usesPageCache() { return file.usesPageCache(); }
        @Override public Alignment alignment() { return file.alignment(); }
        @Override public io.pagewise.internal.IoCounters counters() { return file.counters(); }
        @Override public void close() throws IOException { file.close(); }
    }
}

package io.pagewise.lucene;

import io.pagewise.Native;
import io.pagewise.PageCache;
import java.io.IOException;
import java.lang.reflect.Method;
import java.nio.file.Path;
import org.apache.lucene.store.IOContext;
import org.apache.lucene.store.IndexInput;
import org.apache.lucene.store.IndexOutput;
import org.apache.lucene.store.MergeInfo;
import org.apache.lucene.tests.util.LuceneTestCase;
import org.junit.BeforeClass;

/** Merge inputs with a read window hold about two windows of the file while they read it, and nothing after. */
public class TestMergeReadWindow extends LuceneTestCase {
    private static final int MIB = 1 << 20;
    private static final int FILE_MIB = 48;

    @BeforeClass
    public static void announce() {
        TestLines.announce(TestMergeReadWindow.class);
    }

    public void testAMergeInputHoldsAboutThreeWindowsWhileReading() throws Exception {
        assumeTrue("needs the native library", Native.isAvailable());
        Path path = createTempDir("merge-read-window");
        try (PagewiseDirectory dir = PagewiseDirectory.builder(path).mergeReadWindow(MIB).build()) {
            write(dir, "_0.fdt");
            PageCache.evict(path.resolve("_0.fdt"));
            long mostCached = 0;
            try (IndexInput input = dir.openInput("_0.fdt", mergeContext())) {
                byte[] chunk = new byte[64 << 10];
                for (long at = 0; at < input.length(); at += chunk.length) {
                    input.readBytes(chunk, 0, chunk.length);
                    for (int i = 0; i < chunk.length; i++) {
                        assertEquals("byte at " + (at + i), expected(at + i), chunk[i]);
                    }
                    if ((at + chunk.length) % (4 * MIB) == 0) {
                        mostCached = Math.max(mostCached, PageCache.residency(path.resolve("_0.fdt")).residentBytes());
                    }
                }
            }
            // The current window and the two read ahead: 3 MiB; the mode's own eviction alone keeps 16 MiB behind the
            // reader and the kernel's readahead ahead of it.
            assertTrue("most cached while reading: " + mostCached + " bytes", mostCached <= 4L * MIB);
            assertEquals("cached after close", 0, PageCache.residency(path.resolve("_0.fdt")).residentPages());
        }
    }

    public void testAFileCachedWhenOpenedKeepsItsPages() throws Exception {
        assumeTrue("needs the native library", Native.isAvailable());
        Path path = createTempDir("merge-read-window-cached");
        try (PagewiseDirectory dir = PagewiseDirectory.builder(path).mergeReadWindow(MIB).build()) {
            write(dir, "_0.fdt");
            PageCache.touch(path.resolve("_0.fdt"));
            long before = PageCache.residency(path.resolve("_0.fdt")).residentPages();
            try (IndexInput input = dir.openInput("_0.fdt", mergeContext())) {
                byte[] chunk = new byte[64 << 10];
                for (long at = 0; at < input.length(); at += chunk.length) input.readBytes(chunk, 0, chunk.length);
            }
            assertEquals("pages cached before the merge read", before,
                    PageCache.residency(path.resolve("_0.fdt")).residentPages());
        }
    }

    private static void write(PagewiseDirectory dir, String name) throws IOException {
        byte[] chunk = new byte[MIB];
        try (IndexOutput output = dir.createOutput(name, IOContext.DEFAULT)) {
            for (long at = 0; at < (long) FILE_MIB * MIB; at += chunk.length) {
                for (int i = 0; i < chunk.length; i++) chunk[i] = expected(at + i);
                output.writeBytes(chunk, chunk.length);
            }
        }
    }

    private static byte expected(long offset) {
        return (byte) (offset * 31 + (offset >>> 12));
    }

    /** A merge's context: IOContext's constructor on Lucene 9, its factory on Lucene 10. */
    private static IOContext mergeContext() throws ReflectiveOperationException {
        MergeInfo info = new MergeInfo(1000, (long) FILE_MIB * MIB, false, 1);
        try {
            Method merge = IOContext.class.getMethod("merge", MergeInfo.class);
            return (IOContext) merge.invoke(null, info);
        } catch (NoSuchMethodException lucene9) {
            return IOContext.class.getConstructor(MergeInfo.class).newInstance(info);
        }
    }
}

package io.pagewise.lucene;

import static org.junit.Assume.assumeTrue;

import io.pagewise.Native;
import io.pagewise.PageCache;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import org.apache.lucene.store.IOContext;
import org.apache.lucene.store.IndexInput;
import org.apache.lucene.store.IndexOutput;

/** Writing, reading and measuring files of a PagewiseDirectory for the tests that watch the page cache. */
final class PageCacheChecks {
    static final int MIB = 1 << 20;

    private PageCacheChecks() {}

    /** Skips a test that reads the page cache where the native library is not loaded, and says why. */
    static void assumeNative() {
        assumeTrue("page-cache residency needs the pagewise native library, which is "
                + (Native.isAvailable() ? "loaded" : Native.loadError().getMessage()), Native.isAvailable());
    }

    /** Writes bytes of random data to a new file in a context and returns them. */
    static byte[] write(PagewiseDirectory dir, String name, IOContext context, int bytes, Random random)
            throws IOException {
        byte[] data = new byte[bytes];
        random.nextBytes(data);
        try (IndexOutput out = dir.createOutput(name, context)) {
            // In pieces of odd sizes, so the output's buffer is filled across its edges.
            for (int at = 0; at < bytes; ) {
                int now = Math.min(bytes - at, 1 + random.nextInt(100_000));
                out.writeBytes(data, at, now);
                at += now;
            }
        }
        return data;
    }

    /** Writes a file of random data in the DEFAULT context, makes it durable and drops it from the page cache. */
    static void writeCold(PagewiseDirectory dir, String name, int bytes, Random random) throws IOException {
        write(dir, name, IOContext.DEFAULT, bytes, random);
        dir.sync(List.of(name));
        PageCache.evict(path(dir, name));
        assertAtMost(dir, name, 0.01, "after PageCache.evict (the test's own precondition)");
    }

    /** Writes a file of random data in the DEFAULT context and reads it all into the page cache. */
    static void writeCached(PagewiseDirectory dir, String name, int bytes, Random random) throws IOException {
        write(dir, name, IOContext.DEFAULT, bytes, random);
        PageCache.touch(path(dir, name));
        assertAtLeast(dir, name, 0.99, "after PageCache.touch (the test's own precondition)");
    }

    /** Reads an input from start to end, in pieces of odd sizes, and returns what it read. */
    static byte[] readWhole(IndexInput in, Random random) throws IOException {
        byte[] data = new byte[Math.toIntExact(in.length())];
        for (int at = 0; at < data.length; ) {
            int now = Math.min(data.length - at, 1 + random.nextInt(200_000));
            in.readBytes(data, at, now);
            at += now;
        }
        return data;
    }

    static Path path(PagewiseDirectory dir, String name) {
        return dir.getDirectory().resolve(name);
    }

    /** {@return the share (0 to 1) of a file's pages in the page cache} */
    static double cached(PagewiseDirectory dir, String name) throws IOException {
        return PageCache.residency(path(dir, name)).percent() / 100;
    }

    static void assertAtMost(PagewiseDirectory dir, String name, double share, String when) throws IOException {
        double cached = cached(dir, name);
        if (cached > share) {
            throw new AssertionError(name + " is " + percent(cached) + " cached " + when + ", expected at most "
                    + percent(share));
        }
    }

    static void assertAtLeast(PagewiseDirectory dir, String name, double share, String when) throws IOException {
        double cached = cached(dir, name);
        if (cached < share) {
            throw new AssertionError(name + " is " + percent(cached) + " cached " + when + ", expected at least "
                    + percent(share));
        }
    }

    static String percent(double share) {
        return String.format(java.util.Locale.ROOT, "%.2f %%", share * 100);
    }
}

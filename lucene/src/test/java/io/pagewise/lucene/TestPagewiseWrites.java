package io.pagewise.lucene;

import static io.pagewise.lucene.PageCacheChecks.MIB;
import static io.pagewise.lucene.PageCacheChecks.assertAtLeast;
import static io.pagewise.lucene.PageCacheChecks.assertAtMost;
import static io.pagewise.lucene.PageCacheChecks.readWhole;

import io.pagewise.PageCache;
import java.io.IOException;
import java.nio.file.Files;
import org.apache.lucene.store.IOContext;
import org.apache.lucene.store.IndexInput;
import org.apache.lucene.tests.util.LuceneTestCase;
import org.apache.lucene.tests.util.LuceneTestCase.SuppressFileSystems;
import org.junit.Before;
import org.junit.BeforeClass;

/**
 * With the default policies, merge and flush writes follow their neighbours: a new file is kept in the page cache
 * when the files of its type beside it are (or when the directory is empty), and is not when they are cold; DEFAULT
 * writes are always kept. Lucene's mock file systems are left out: these tests measure the real file's pages.
 */
@SuppressFileSystems("*")
public class TestPagewiseWrites extends LuceneTestCase {
    private static final int NEIGHBOUR_BYTES = 4 * MIB;
    private static final int NEW_FILE_BYTES = 8 * MIB + 777;

    @BeforeClass
    public static void announce() {
        TestLines.announce(TestPagewiseWrites.class);
    }

    @Before
    public void needsResidency() {
        PageCacheChecks.assumeNative();
    }

    public void testMergeWriteBesideColdNeighboursIsNotKept() throws IOException {
        try (PagewiseDirectory dir = PagewiseDirectory.open(createTempDir())) {
            PageCacheChecks.writeCold(dir, "_0.doc", NEIGHBOUR_BYTES, random());
            PageCacheChecks.writeCold(dir, "_1.doc", NEIGHBOUR_BYTES, random());
            byte[] written = PageCacheChecks.write(dir, "_2.doc", LuceneContexts.merge(NEW_FILE_BYTES),
                    NEW_FILE_BYTES, random());
            assertAtMost(dir, "_2.doc", 0.01, "after a merge wrote it beside cold .doc files");
            assertReadsBack(dir, "_2.doc", written);
        }
    }

    public void testMergeWriteBesideCachedNeighboursIsKept() throws IOException {
        try (PagewiseDirectory dir = PagewiseDirectory.open(createTempDir())) {
            PageCacheChecks.writeCold(dir, "_0.doc", NEIGHBOUR_BYTES, random());
            PageCache.touch(PageCacheChecks.path(dir, "_0.doc"));
            PageCacheChecks.write(dir, "_1.doc", LuceneContexts.merge(NEW_FILE_BYTES), NEW_FILE_BYTES, random());
            assertAtLeast(dir, "_1.doc", 0.95, "after a merge wrote it beside a cached .doc file");
        }
    }

    /**
     * A merge reads the segments it merges while it writes the new one, and an input in EVICT keeps what it read
     * cached until it closes: the neighbours count as they were before the merge opened them.
     */
    public void testNeighboursAMergeIsReadingCountAsTheyWereBefore() throws IOException {
        // Windows of half a neighbour: the last one each input read stays cached while it is open, half the file.
        try (PagewiseDirectory dir = PagewiseDirectory.builder(createTempDir()).mergeReadWindow(NEIGHBOUR_BYTES / 2)
                .build()) {
            PageCacheChecks.writeCold(dir, "_0.doc", NEIGHBOUR_BYTES, random());
            PageCacheChecks.writeCold(dir, "_1.doc", NEIGHBOUR_BYTES, random());
            try (IndexInput zero = dir.openInput("_0.doc", LuceneContexts.merge(NEIGHBOUR_BYTES));
                    IndexInput one = dir.openInput("_1.doc", LuceneContexts.merge(NEIGHBOUR_BYTES))) {
                readWhole(zero, random());
                readWhole(one, random());
                // A second input of the same file closing leaves the first one's note in place.
                dir.openInput("_1.doc", IOContext.READONCE).close();
                assertAtLeast(dir, "_0.doc", 0.5, "while a merge input that read it is open (the test's premise)");
                PageCacheChecks.write(dir, "_2.doc", LuceneContexts.merge(NEW_FILE_BYTES), NEW_FILE_BYTES, random());
            }
            assertAtMost(dir, "_2.doc", 0.01, "after a merge wrote it while reading cold .doc files");
            // Once the inputs are closed their files count as they are.
            PageCache.touch(PageCacheChecks.path(dir, "_0.doc"));
            PageCache.touch(PageCacheChecks.path(dir, "_1.doc"));
            PageCache.touch(PageCacheChecks.path(dir, "_2.doc"));
            PageCacheChecks.write(dir, "_3.doc", LuceneContexts.merge(NEW_FILE_BYTES), NEW_FILE_BYTES, random());
            assertAtLeast(dir, "_3.doc", 0.95, "after a merge wrote it beside cached .doc files, none open");
        }
    }

    /**
     * A segment's files follow what its neighbours held when its first file was made. A merge beside a near-real-time
     * reader reads its sources through the reader's mappings, no input of the directory's, so by the time it writes
     * its compound file it has brought them all into the page cache; they must still count as cold.
     */
    public void testASegmentFollowsWhatItsNeighboursHeldWhenItBegan() throws IOException {
        try (PagewiseDirectory dir = PagewiseDirectory.open(createTempDir())) {
            PageCacheChecks.writeCold(dir, "_0.cfs", NEIGHBOUR_BYTES, random());
            PageCacheChecks.writeCold(dir, "_1.cfs", NEIGHBOUR_BYTES, random());
            PageCacheChecks.write(dir, "_2.fdt", LuceneContexts.merge(NEW_FILE_BYTES), NEW_FILE_BYTES, random());
            // What reading the sources through mappings leaves in the page cache.
            PageCache.touch(PageCacheChecks.path(dir, "_0.cfs"));
            PageCache.touch(PageCacheChecks.path(dir, "_1.cfs"));
            PageCacheChecks.write(dir, "_2.cfs", LuceneContexts.merge(NEW_FILE_BYTES), NEW_FILE_BYTES, random());
            assertAtMost(dir, "_2.cfs", 0.01, "after the merge wrote it from .cfs sources that were cold as it began");
            PageCacheChecks.write(dir, "_2.si", LuceneContexts.merge(NEW_FILE_BYTES), 1000, random());
            // The next segment begins beside cached sources.
            PageCache.touch(PageCacheChecks.path(dir, "_2.cfs"));
            PageCacheChecks.write(dir, "_3.cfs", LuceneContexts.merge(NEW_FILE_BYTES), NEW_FILE_BYTES, random());
            assertAtLeast(dir, "_3.cfs", 0.95, "after a merge wrote it beside cached .cfs files");
        }
    }

    /** The neighbours are those of the new file's type: cached files of other types do not keep it. */
    public void testOnlyNeighboursOfTheSameTypeCount() throws IOException {
        try (PagewiseDirectory dir = PagewiseDirectory.open(createTempDir())) {
            PageCacheChecks.writeCold(dir, "_0.doc", NEIGHBOUR_BYTES, random());
            PageCacheChecks.writeCached(dir, "_0.tim", 4 * NEIGHBOUR_BYTES, random());
            PageCacheChecks.write(dir, "_1.doc", LuceneContexts.merge(NEW_FILE_BYTES), NEW_FILE_BYTES, random());
            assertAtMost(dir, "_1.doc", 0.01, "after a merge wrote it beside a cold .doc and a cached .tim file");
        }
    }

    public void testFlushIntoAnEmptyDirectoryIsKept() throws IOException {
        try (PagewiseDirectory dir = PagewiseDirectory.open(createTempDir())) {
            PageCacheChecks.write(dir, "_0.fdt", LuceneContexts.flush(NEW_FILE_BYTES), NEW_FILE_BYTES, random());
            assertAtLeast(dir, "_0.fdt", 0.95, "after a flush wrote it into an empty directory");
        }
    }

    public void testFlushBesideColdNeighboursIsNotKept() throws IOException {
        try (PagewiseDirectory dir = PagewiseDirectory.open(createTempDir())) {
            PageCacheChecks.writeCold(dir, "_0.fdt", NEIGHBOUR_BYTES, random());
            PageCacheChecks.write(dir, "_1.fdt", LuceneContexts.flush(NEW_FILE_BYTES), NEW_FILE_BYTES, random());
            assertAtMost(dir, "_1.fdt", 0.01, "after a flush wrote it beside a cold .fdt file");
        }
    }

    public void testDefaultWriteIsKeptBesideColdNeighbours() throws IOException {
        try (PagewiseDirectory dir = PagewiseDirectory.open(createTempDir())) {
            PageCacheChecks.writeCold(dir, "_0.doc", NEIGHBOUR_BYTES, random());
            PageCacheChecks.write(dir, "_1.doc", IOContext.DEFAULT, NEW_FILE_BYTES, random());
            assertAtLeast(dir, "_1.doc", 0.95, "after a DEFAULT write beside a cold .doc file");
        }
    }

    /**
     * A directory entry that is not a file (a subdirectory, as Lucene's test file systems make) is no neighbour: a
     * merge write beside one works, and cachedByFileType leaves it out.
     */
    public void testSubdirectoriesAreNotNeighbours() throws IOException {
        try (PagewiseDirectory dir = PagewiseDirectory.open(createTempDir())) {
            Files.createDirectory(dir.getDirectory().resolve("extra0"));
            Files.createDirectory(dir.getDirectory().resolve("sub.doc"));
            PageCacheChecks.writeCold(dir, "_0.doc", NEIGHBOUR_BYTES, random());
            PageCacheChecks.write(dir, "_1.doc", LuceneContexts.merge(NEW_FILE_BYTES), NEW_FILE_BYTES, random());
            assertAtMost(dir, "_1.doc", 0.01, "after a merge wrote it beside a cold .doc file and subdirectories");
            PageCacheChecks.write(dir, "_0.fdt", LuceneContexts.flush(NEW_FILE_BYTES), NEW_FILE_BYTES, random());
            for (FileTypeCache row : dir.cachedByFileType()) {
                if (row.fileType().equals("doc")) {
                    assertEquals(row.toString(), 2, row.files());
                    assertEquals(row.toString(), NEIGHBOUR_BYTES + NEW_FILE_BYTES, row.bytes());
                }
                assertNotEquals("a subdirectory is counted: " + row, "", row.fileType());
            }
        }
    }

    private static void assertReadsBack(PagewiseDirectory dir, String name, byte[] written) throws IOException {
        try (IndexInput in = dir.openInput(name, IOContext.READONCE)) {
            assertArrayEquals(written, readWhole(in, random()));
        }
    }
}

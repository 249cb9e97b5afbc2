package io.pagewise.lucene;

import static io.pagewise.lucene.PageCacheChecks.MIB;
import static io.pagewise.lucene.PageCacheChecks.readWhole;

import io.pagewise.Native;
import io.pagewise.PageCache;
import java.io.IOException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.lucene.store.IOContext;
import org.apache.lucene.store.IndexInput;
import org.apache.lucene.store.IndexOutput;
import org.apache.lucene.tests.util.LuceneTestCase;
import org.apache.lucene.tests.util.LuceneTestCase.SuppressFileSystems;
import org.junit.BeforeClass;

/**
 * ioByFileType counts the bytes written and read per file type and context, and the bytes mapped for memory-mapped
 * reads; cachedByFileType agrees with PageCache.residency. The I/O counters run on the pure-Java path too, where
 * every read is mapped.
 */
@SuppressFileSystems("*")
public class TestPagewiseCounters extends LuceneTestCase {
    @BeforeClass
    public static void announce() {
        TestLines.announce(TestPagewiseCounters.class);
    }

    public void testWritesAreCountedPerFileTypeAndContext() throws IOException {
        try (PagewiseDirectory dir = PagewiseDirectory.open(createTempDir())) {
            assertEquals(List.of(), dir.ioByFileType());
            int doc = 1 + random().nextInt(3 * MIB);
            int merged = 1 + random().nextInt(3 * MIB);
            int flushed = 1 + random().nextInt(MIB);
            int tim = 1 + random().nextInt(MIB);
            PageCacheChecks.write(dir, "_0.doc", IOContext.DEFAULT, doc, random());
            PageCacheChecks.write(dir, "_1.doc", LuceneContexts.merge(merged), merged, random());
            PageCacheChecks.write(dir, "_2.doc", LuceneContexts.flush(flushed), flushed, random());
            PageCacheChecks.write(dir, "_2.tim", LuceneContexts.flush(tim), tim, random());
            String temp;
            try (IndexOutput out = dir.createTempOutput("_3", "sort", LuceneContexts.merge(100))) {
                out.writeBytes(new byte[100], 100);
                temp = out.getName();
            }
            assertEquals("tmp", PagewiseDirectory.fileType(temp));
            Map<String, FileTypeIo> rows = byTypeAndKind(dir);
            assertEquals(rows.toString(), 5, rows.size());
            assertEquals(new FileTypeIo("doc", ContextKind.DEFAULT, 0, doc, 0), rows.get("doc DEFAULT"));
            assertEquals(new FileTypeIo("doc", ContextKind.MERGE, 0, merged, 0), rows.get("doc MERGE"));
            assertEquals(new FileTypeIo("doc", ContextKind.FLUSH, 0, flushed, 0), rows.get("doc FLUSH"));
            assertEquals(new FileTypeIo("tim", ContextKind.FLUSH, 0, tim, 0), rows.get("tim FLUSH"));
            assertEquals(new FileTypeIo("tmp", ContextKind.MERGE, 0, 100, 0), rows.get("tmp MERGE"));
            assertEquals(doc, dir.fileLength("_0.doc"));
            assertEquals(merged, dir.fileLength("_1.doc"));
        }
    }

    public void testReadsAreCountedPerFileTypeAndContext() throws IOException {
        try (PagewiseDirectory dir = PagewiseDirectory.open(createTempDir())) {
            int bytes = MIB + random().nextInt(3 * MIB);
            PageCacheChecks.write(dir, "_0.fdt", IOContext.DEFAULT, bytes, random());
            try (IndexInput in = dir.openInput("_0.fdt", LuceneContexts.merge(bytes))) {
                readWhole(in, random());
            }
            try (IndexInput in = dir.openInput("_0.fdt", IOContext.READONCE)) {
                readWhole(in, random());
            }
            try (IndexInput in = dir.openInput("_0.fdt", IOContext.DEFAULT)) {
                in.seek(bytes / 2);
                in.readByte();
            }
            Map<String, FileTypeIo> rows = byTypeAndKind(dir);
            // Through pagewise every byte a whole read took; on the pure-Java path all reads are mapped.
            boolean native_ = Native.isAvailable();
            assertEquals(new FileTypeIo("fdt", ContextKind.MERGE, native_ ? bytes : 0, 0, native_ ? 0 : bytes),
                    rows.get("fdt MERGE"));
            assertEquals(new FileTypeIo("fdt", ContextKind.READ_ONCE, native_ ? bytes : 0, 0, native_ ? 0 : bytes),
                    rows.get("fdt READ_ONCE"));
            assertEquals(new FileTypeIo("fdt", ContextKind.DEFAULT, 0, bytes, bytes), rows.get("fdt DEFAULT"));
        }
    }

    public void testCachedByFileTypeAgreesWithResidency() throws IOException {
        PageCacheChecks.assumeNative();
        try (PagewiseDirectory dir = PagewiseDirectory.open(createTempDir())) {
            PageCacheChecks.writeCached(dir, "_0.tim", 2 * MIB + 1, random());
            PageCacheChecks.writeCached(dir, "_1.tim", MIB + 4000, random());
            PageCacheChecks.writeCold(dir, "_0.doc", 3 * MIB + 5, random());
            PageCacheChecks.writeCold(dir, "_1.doc", 2 * MIB, random());
            // Half of one .doc file comes back.
            try (IndexInput in = dir.openInput("_1.doc", IOContext.DEFAULT)) {
                for (long at = 0; at < MIB; at += 4096) {
                    in.seek(at);
                    in.readByte();
                }
            }
            PageCacheChecks.write(dir, "segments_1", IOContext.DEFAULT, 1234, random());
            Map<String, FileTypeCache> rows = new HashMap<>();
            for (FileTypeCache row : dir.cachedByFileType()) rows.put(row.fileType(), row);
            assertEquals(rows.toString(), Map.of("tim", 0, "doc", 0, "", 0).keySet(), rows.keySet());
            assertAgrees(dir, rows.get("tim"), 2, 3 * MIB + 4001, "_0.tim", "_1.tim");
            assertAgrees(dir, rows.get("doc"), 2, 5 * MIB + 5, "_0.doc", "_1.doc");
            assertAgrees(dir, rows.get(""), 1, 1234, "segments_1");
            assertEquals(rows.get("tim").toString(), 100, rows.get("tim").percentCached(), 0.001);
            assertTrue(rows.get("doc").toString(), rows.get("doc").cachedBytes() >= MIB / 2);
            assertTrue(rows.get("doc").toString(), rows.get("doc").cachedBytes() <= 2 * MIB);
        }
    }

    private static void assertAgrees(PagewiseDirectory dir, FileTypeCache row, int files, long bytes,
            String... names) throws IOException {
        assertEquals(row.toString(), files, row.files());
        assertEquals(row.toString(), bytes, row.bytes());
        long resident = 0;
        for (String name : names) {
            resident += Math.min(PageCache.residency(PageCacheChecks.path(dir, name)).residentBytes(),
                    dir.fileLength(name));
        }
        assertEquals(row + " against PageCache.residency", resident, row.cachedBytes());
        assertTrue(row.toString(), row.dirtyBytes() <= row.cachedBytes());
    }

    private static Map<String, FileTypeIo> byTypeAndKind(PagewiseDirectory dir) {
        Map<String, FileTypeIo> rows = new HashMap<>();
        for (FileTypeIo io : dir.ioByFileType()) rows.put(io.fileType() + " " + io.kind(), io);
        return rows;
    }
}

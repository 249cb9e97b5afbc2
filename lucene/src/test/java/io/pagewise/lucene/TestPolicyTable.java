package io.pagewise.lucene;

import io.pagewise.AccessHint;
import io.pagewise.CacheMode;
import java.io.IOException;
import java.nio.file.Path;
import org.apache.lucene.store.IOContext;
import org.apache.lucene.store.IndexInput;
import org.apache.lucene.tests.util.LuceneTestCase;
import org.junit.BeforeClass;

/**
 * PolicyTable and FilePolicy: the defaults, a cell for a file type winning over its context's policy (in the table
 * and in the I/O the directory does), and bad input refused with a message naming what was wrong.
 */
public class TestPolicyTable extends LuceneTestCase {
    @BeforeClass
    public static void announce() {
        TestLines.announce(TestPolicyTable.class);
    }

    public void testDefaults() {
        PolicyTable table = PolicyTable.defaults();
        assertEquals(FilePolicy.of(CacheMode.WRITEBACK, AccessHint.NORMAL), table.policy(ContextKind.DEFAULT));
        assertEquals(FilePolicy.of(CacheMode.EVICT, AccessHint.SEQUENTIAL), table.policy(ContextKind.READ_ONCE));
        assertEquals(FilePolicy.followingNeighbours(CacheMode.EVICT, AccessHint.SEQUENTIAL),
                table.policy(ContextKind.MERGE));
        assertEquals(FilePolicy.followingNeighbours(CacheMode.EVICT, AccessHint.SEQUENTIAL),
                table.policy(ContextKind.FLUSH));
        for (ContextKind kind : ContextKind.values()) {
            assertEquals(table.policy(kind), table.policy(kind, "doc"));
            assertTrue(table.cells().get(kind).isEmpty());
        }
        assertTrue(table.policy(ContextKind.DEFAULT).mapsReads());
        assertFalse(table.policy(ContextKind.MERGE).mapsReads());
    }

    public void testACellForAFileTypeWinsOverItsContext() {
        FilePolicy vec = FilePolicy.of(CacheMode.DIRECT, AccessHint.RANDOM);
        FilePolicy merge = FilePolicy.of(CacheMode.DONTCACHE, AccessHint.SEQUENTIAL);
        FilePolicy none = FilePolicy.of(CacheMode.WRITEBACK, AccessHint.NOREUSE);
        // The cell is set before the context's policy: order does not matter.
        PolicyTable table = PolicyTable.builder().policy(ContextKind.MERGE, "vec", vec)
                .policy(ContextKind.MERGE, merge).policy(ContextKind.READ_ONCE, "", none).build();
        assertEquals(vec, table.policy(ContextKind.MERGE, "vec"));
        assertEquals(merge, table.policy(ContextKind.MERGE, "doc"));
        assertEquals(merge, table.policy(ContextKind.MERGE));
        assertEquals(none, table.policy(ContextKind.READ_ONCE, ""));
        assertEquals(PolicyTable.defaults().policy(ContextKind.READ_ONCE), table.policy(ContextKind.READ_ONCE, "vec"));
        assertEquals(PolicyTable.defaults().policy(ContextKind.DEFAULT), table.policy(ContextKind.DEFAULT, "vec"));
        assertEquals(java.util.Map.of("vec", vec), table.cells().get(ContextKind.MERGE));
        // File types are extensions, matched as Lucene names its files: lower case.
        assertEquals(vec, PolicyTable.builder().policy(ContextKind.MERGE, "VEC", vec).build()
                .policy(ContextKind.MERGE, "vec"));
        String text = table.toString();
        assertTrue(text, text.contains("MERGE.vec=DIRECT/RANDOM"));
    }

    /** The directory reads by the cell: a mapped read for one file type, a pagewise read for the others. */
    public void testTheDirectoryReadsAndCountsByTheCell() throws IOException {
        Path path = createTempDir();
        try (PagewiseDirectory dir = PagewiseDirectory.builder(path)
                .policy(ContextKind.DEFAULT, FilePolicy.of(CacheMode.EVICT, AccessHint.RANDOM))
                .policy(ContextKind.DEFAULT, "tip", FilePolicy.of(CacheMode.WRITEBACK, AccessHint.NORMAL))
                .build()) {
            PageCacheChecks.write(dir, "_0.tip", IOContext.DEFAULT, 10_000, random());
            PageCacheChecks.write(dir, "_0.tim", IOContext.DEFAULT, 20_000, random());
            try (IndexInput tip = dir.openInput("_0.tip", IOContext.DEFAULT);
                    IndexInput tim = dir.openInput("_0.tim", IOContext.DEFAULT)) {
                assertFalse(tip.toString(), tip instanceof StorageIndexInput);
                tip.readBytes(new byte[10_000], 0, 10_000);
                tim.readBytes(new byte[20_000], 0, 20_000);
                if (io.pagewise.Native.isAvailable()) {
                    assertTrue(tim.toString(), tim instanceof StorageIndexInput);
                    assertTrue(tim.toString(), tim.toString().contains("EVICT"));
                } else {
                    assertFalse("EVICT runs as WRITEBACK, mapped, on the pure-Java path: " + tim,
                            tim instanceof StorageIndexInput);
                }
            }
            boolean native_ = io.pagewise.Native.isAvailable();
            assertTrue(dir.ioByFileType().toString(), dir.ioByFileType().contains(
                    new FileTypeIo("tip", ContextKind.DEFAULT, 0, 10_000, 10_000)));
            assertTrue(dir.ioByFileType().toString(), dir.ioByFileType().contains(
                    new FileTypeIo("tim", ContextKind.DEFAULT, native_ ? 20_000 : 0, 20_000, native_ ? 0 : 20_000)));
        }
    }

    /** A file MMapDirectory's preload rule selects is mapped, and loaded, whatever its policy. */
    public void testPreloadedFilesAreMappedWhateverThePolicy() throws IOException {
        try (PagewiseDirectory dir = PagewiseDirectory.builder(createTempDir())
                .policy(ContextKind.DEFAULT, FilePolicy.of(CacheMode.EVICT, AccessHint.RANDOM)).build()) {
            dir.setPreload((name, context) -> name.endsWith(".tip"));
            PageCacheChecks.write(dir, "_0.tip", IOContext.DEFAULT, 10_000, random());
            PageCacheChecks.write(dir, "_0.tim", IOContext.DEFAULT, 10_000, random());
            try (IndexInput tip = dir.openInput("_0.tip", IOContext.DEFAULT);
                    IndexInput tim = dir.openInput("_0.tim", IOContext.DEFAULT)) {
                assertFalse(tip.toString(), tip instanceof StorageIndexInput);
                assertEquals(io.pagewise.Native.isAvailable(), tim instanceof StorageIndexInput);
            }
            expectThrows(NullPointerException.class, () -> dir.setPreload(null));
        }
    }

    public void testARangeHintIsRefused() {
        for (AccessHint hint : new AccessHint[] {AccessHint.WILLNEED, AccessHint.DONTNEED}) {
            IllegalArgumentException e = expectThrows(IllegalArgumentException.class,
                    () -> FilePolicy.of(CacheMode.EVICT, hint));
            assertTrue(e.getMessage(), e.getMessage().contains("AccessHint." + hint));
            e = expectThrows(IllegalArgumentException.class,
                    () -> FilePolicy.followingNeighbours(CacheMode.WRITEBACK, hint));
            assertTrue(e.getMessage(), e.getMessage().contains("AccessHint." + hint));
        }
    }

    public void testAFileTypeWithADotOrASlashIsRefused() {
        FilePolicy policy = FilePolicy.of(CacheMode.EVICT, AccessHint.NORMAL);
        for (String type : new String[] {".vec", "si.vec", "a/b"}) {
            IllegalArgumentException e = expectThrows(IllegalArgumentException.class,
                    () -> PolicyTable.builder().policy(ContextKind.MERGE, type, policy));
            assertTrue(e.getMessage(), e.getMessage().contains("'" + type + "'"));
            e = expectThrows(IllegalArgumentException.class,
                    () -> PagewiseDirectory.builder(createTempDir()).policy(ContextKind.MERGE, type, policy));
            assertTrue(e.getMessage(), e.getMessage().contains("'" + type + "'"));
        }
    }

    public void testNullsAreRefusedByName() {
        FilePolicy policy = FilePolicy.of(CacheMode.EVICT, AccessHint.NORMAL);
        assertNpe("mode", () -> FilePolicy.of(null, AccessHint.NORMAL));
        assertNpe("hint", () -> FilePolicy.of(CacheMode.EVICT, null));
        assertNpe("kind", () -> PolicyTable.builder().policy(null, policy));
        assertNpe("policy", () -> PolicyTable.builder().policy(ContextKind.MERGE, null));
        assertNpe("kind", () -> PolicyTable.builder().policy(null, "vec", policy));
        assertNpe("fileType", () -> PolicyTable.builder().policy(ContextKind.MERGE, null, policy));
        assertNpe("policy", () -> PolicyTable.builder().policy(ContextKind.MERGE, "vec", null));
        assertNpe("path", () -> PagewiseDirectory.builder(null));
        assertNpe("policies", () -> PagewiseDirectory.builder(createTempDir()).policies(null));
        assertNpe("lockFactory", () -> PagewiseDirectory.builder(createTempDir()).lockFactory(null));
    }

    public void testAMapChunkThatIsNotPositiveIsRefused() throws IOException {
        for (long bytes : new long[] {0, -1, Long.MIN_VALUE}) {
            IllegalArgumentException e = expectThrows(IllegalArgumentException.class,
                    () -> PagewiseDirectory.builder(createTempDir()).mapChunkBytes(bytes));
            assertTrue(e.getMessage(), e.getMessage().contains(bytes + " bytes"));
        }
        // As MMapDirectory takes it: a size that is not a power of two is rounded down to one.
        try (PagewiseDirectory dir = PagewiseDirectory.builder(createTempDir()).mapChunkBytes(100).build()) {
            PageCacheChecks.write(dir, "_0.tim", IOContext.DEFAULT, 1000, random());
            try (IndexInput in = dir.openInput("_0.tim", IOContext.DEFAULT)) {
                in.seek(999);
                in.readByte();
            }
        }
    }

    /** A whole table given to the builder replaces the cells set on it. */
    public void testAWholeTableReplacesTheBuildersCells() throws IOException {
        PolicyTable table = PolicyTable.builder()
                .policy(ContextKind.FLUSH, FilePolicy.of(CacheMode.DIRECT, AccessHint.NORMAL)).build();
        try (PagewiseDirectory dir = PagewiseDirectory.builder(createTempDir())
                .policy(ContextKind.FLUSH, FilePolicy.of(CacheMode.EVICT, AccessHint.RANDOM)).policies(table)
                .build()) {
            assertSame(table, dir.policies());
        }
    }

    private static void assertNpe(String named, ThrowingRunnable call) {
        NullPointerException e = expectThrows(NullPointerException.class, call);
        assertEquals(named, e.getMessage());
    }
}

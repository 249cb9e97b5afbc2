package io.pagewise.opensearch;

import io.pagewise.AccessHint;
import io.pagewise.CacheMode;
import io.pagewise.Native;
import io.pagewise.PageCache;
import io.pagewise.Residency;
import io.pagewise.lucene.ContextKind;
import io.pagewise.lucene.FilePolicy;
import io.pagewise.lucene.PagewiseDirectory;
import io.pagewise.lucene.PolicyTable;
import org.apache.lucene.store.DataAccessHint;
import org.apache.lucene.store.Directory;
import org.apache.lucene.store.FilterDirectory;
import org.apache.lucene.store.FileTypeHint;
import org.apache.lucene.store.IOContext;
import org.apache.lucene.store.IndexInput;
import org.apache.lucene.store.IndexOutput;
import org.apache.lucene.store.Lock;
import org.apache.lucene.store.NativeFSLockFactory;
import org.apache.lucene.store.SimpleFSLockFactory;
import org.opensearch.Version;
import org.opensearch.cluster.metadata.IndexMetadata;
import org.opensearch.common.settings.Settings;
import org.opensearch.index.IndexSettings;
import org.opensearch.test.IndexSettingsModule;
import org.opensearch.test.OpenSearchTestCase;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

/** The directory a shard of index.store.type pagewise gets: its policy table, lock factory and read advice. */
public class PagewiseDirectoryFactoryIT extends OpenSearchTestCase {
    @org.junit.BeforeClass
    public static void announce() {
        System.out.println(PagewiseDirectoryFactoryIT.class.getSimpleName() + ": -Dtests.seed="
                + com.carrotsearch.randomizedtesting.RandomizedContext.current().getRunnerSeedAsString() + ", pagewise native: "
                + (Native.isAvailable() ? Native.binding() : "none (" + Native.loadError().getMessage() + ")"));
    }

    private static IndexSettings indexSettings(Settings pagewise) {
        Settings settings = Settings.builder().put(IndexMetadata.SETTING_VERSION_CREATED, Version.CURRENT)
                .put("index.store.type", PagewiseDirectoryFactory.STORE_TYPE).put(pagewise).build();
        return IndexSettingsModule.newIndexSettings("idx", settings, PagewiseIndexSettings.all().toArray(new org.opensearch.common.settings.Setting<?>[0]));
    }

    private static PagewiseDirectory pagewise(Directory directory) {
        return (PagewiseDirectory) FilterDirectory.unwrap(directory);
    }

    /**
     * While its shard recovers, a file written in IOContext.DEFAULT (as OpenSearch writes the files a recovery
     * receives) is written under the READ_ONCE policy, which evicts it; before and after, under DEFAULT's.
     */
    public void testRecoveryWritesAreWrittenOnce() throws IOException {
        assumeTrue("residency needs the native library: " + Native.loadError(), Native.isAvailable());
        Path dir = createTempDir();
        try (Directory outer = new PagewiseDirectoryFactory().newFSDirectory(dir, NativeFSLockFactory.INSTANCE,
                indexSettings(Settings.EMPTY))) {
            RecoveringDirectory recovering = (RecoveringDirectory) outer;
            byte[] block = new byte[1 << 20];
            random().nextBytes(block);
            for (String name : List.of("_0.fdt", "_1.fdt", "_2.fdt")) {
                recovering.recovering(name.equals("_1.fdt"));
                try (IndexOutput out = outer.createOutput(name, IOContext.DEFAULT)) {
                    for (int i = 0; i < 4; i++) out.writeBytes(block, block.length);
                }
            }
            Residency received = PageCache.residency(dir.resolve("_1.fdt"));
            assertTrue("received while recovering: " + received, received.residentPages() <= received.totalPages() / 100);
            for (String kept : List.of("_0.fdt", "_2.fdt")) {
                Residency residency = PageCache.residency(dir.resolve(kept));
                assertEquals(kept + " written before or after recovering", residency.totalPages(), residency.residentPages());
            }
            long writtenOnce = pagewise(outer).ioByFileType().stream()
                    .filter(io -> io.kind() == ContextKind.READ_ONCE && io.fileType().equals("fdt"))
                    .mapToLong(io -> io.bytesWritten()).sum();
            assertEquals(4L << 20, writtenOnce);
        }
    }

    /**
     * A segment file opened while its shard recovers, as the recovering copy opens its segments, is mapped with RANDOM
     * advice: a one-byte read faults in that page, not the kernel's readahead around it. Once the shard has recovered,
     * the same input is advised as its context says (here NORMAL), and a read pulls in the readahead around it again.
     * A plain IOContext.DEFAULT open by anyone but OpenSearch's file transfer (Lucene's compound reader) stays mapped.
     */
    public void testSegmentsOpenedWhileRecoveringAreAdvisedRandomUntilRecovered() throws IOException {
        assumeTrue("residency needs the native library: " + Native.loadError(), Native.isAvailable());
        Path dir = createTempDir();
        try (Directory outer = new PagewiseDirectoryFactory().newFSDirectory(dir, NativeFSLockFactory.INSTANCE,
                indexSettings(Settings.EMPTY))) {
            RecoveringDirectory recovering = (RecoveringDirectory) outer;
            writeCold(outer, dir, "_0.doc");
            recovering.recovering(true);
            try (IndexInput in = outer.openInput("_0.doc", IOContext.DEFAULT)) {
                in.seek(4 << 20);
                in.readByte();
                Residency opened = PageCache.residency(dir.resolve("_0.doc"));
                assertTrue("pages cached by a one-byte read while recovering: " + opened, opened.residentPages() <= 16);
                recovering.recovering(false);
                in.seek(12 << 20);
                in.readByte();
                Residency after = PageCache.residency(dir.resolve("_0.doc"));
                assertTrue("pages cached by a one-byte read once recovered (NORMAL advice, readahead): " + after,
                        after.residentPages() > 16);
            }
            long mapped = pagewise(outer).ioByFileType().stream()
                    .filter(io -> io.kind() == ContextKind.DEFAULT && io.fileType().equals("doc"))
                    .mapToLong(io -> io.bytesMapped()).sum();
            assertEquals("plain DEFAULT opens outside a file transfer are mapped", 16L << 20, mapped);
        }
    }

    /** An input opened and closed while its shard recovers is left alone when the shard has recovered. */
    public void testInputClosedWhileRecoveringIsNotAdvised() throws IOException {
        Path dir = createTempDir();
        try (Directory outer = new PagewiseDirectoryFactory().newFSDirectory(dir, NativeFSLockFactory.INSTANCE,
                indexSettings(Settings.EMPTY))) {
            RecoveringDirectory recovering = (RecoveringDirectory) outer;
            try (IndexOutput out = outer.createOutput("_0.doc", IOContext.DEFAULT)) {
                out.writeBytes(new byte[3 << 20], 3 << 20);
            }
            recovering.recovering(true);
            outer.openInput("_0.doc", IOContext.DEFAULT).close();
            recovering.recovering(false);
            try (IndexInput in = outer.openInput("_0.doc", IOContext.DEFAULT)) {
                assertEquals(3 << 20, in.length());
            }
        }
    }

    /**
     * A compound file opened while recovering stays RANDOM once recovered: its parts were advised by the slices Lucene
     * cut from it, which re-advising the whole file by its plain context would undo.
     */
    public void testCompoundFileOpenedWhileRecoveringStaysRandom() throws IOException {
        assumeTrue("residency needs the native library: " + Native.loadError(), Native.isAvailable());
        Path dir = createTempDir();
        try (Directory outer = new PagewiseDirectoryFactory().newFSDirectory(dir, NativeFSLockFactory.INSTANCE,
                indexSettings(Settings.EMPTY))) {
            RecoveringDirectory recovering = (RecoveringDirectory) outer;
            writeCold(outer, dir, "_0.cfs");
            recovering.recovering(true);
            try (IndexInput in = outer.openInput("_0.cfs", IOContext.DEFAULT)) {
                recovering.recovering(false);
                in.seek(12 << 20);
                in.readByte();
                Residency after = PageCache.residency(dir.resolve("_0.cfs"));
                assertTrue("pages cached by a one-byte read once recovered: " + after, after.residentPages() <= 16);
            }
        }
    }

    /** Writes 16 MiB of random bytes to a new file, syncs it and drops it from the page cache. */
    private static void writeCold(Directory outer, Path dir, String name) throws IOException {
        byte[] block = new byte[1 << 20];
        random().nextBytes(block);
        try (IndexOutput out = outer.createOutput(name, IOContext.DEFAULT)) {
            for (int i = 0; i < 16; i++) out.writeBytes(block, block.length);
        }
        outer.sync(List.of(name));
        PageCache.evict(dir.resolve(name));
    }

    public void testDefaultsAreThePolicyTableDefaults() throws IOException {
        try (PagewiseDirectory directory = pagewise(new PagewiseDirectoryFactory()
                .newFSDirectory(createTempDir(), NativeFSLockFactory.INSTANCE, indexSettings(Settings.EMPTY)))) {
            PolicyTable defaults = PolicyTable.defaults();
            for (ContextKind kind : ContextKind.values()) {
                assertEquals(kind.name(), defaults.policy(kind), directory.policies().policy(kind));
            }
            assertTrue("asynchronous writes by default", directory.asyncWrites());
        }
    }

    public void testSettingsSetThePolicies() throws IOException {
        Settings pagewise = Settings.builder().put("index.store.pagewise.merge.mode", "direct")
                .put("index.store.pagewise.merge.follow_neighbours", false)
                .put("index.store.pagewise.flush.mode", "WriteBack").put("index.store.pagewise.flush.hint", "normal")
                .put("index.store.pagewise.read_once.hint", "noreuse").put("index.store.pagewise.async_writes", false).build();
        try (PagewiseDirectory directory = pagewise(new PagewiseDirectoryFactory()
                .newFSDirectory(createTempDir(), NativeFSLockFactory.INSTANCE, indexSettings(pagewise)))) {
            assertEquals(FilePolicy.of(CacheMode.DIRECT, AccessHint.SEQUENTIAL), directory.policies().policy(ContextKind.MERGE));
            assertEquals(FilePolicy.followingNeighbours(CacheMode.WRITEBACK, AccessHint.NORMAL),
                    directory.policies().policy(ContextKind.FLUSH));
            assertEquals(FilePolicy.of(CacheMode.EVICT, AccessHint.NOREUSE), directory.policies().policy(ContextKind.READ_ONCE));
            assertEquals(PolicyTable.defaults().policy(ContextKind.DEFAULT), directory.policies().policy(ContextKind.DEFAULT));
            assertFalse("index.store.pagewise.async_writes false", directory.asyncWrites());
        }
    }

    public void testLockFactoryIsTheOnePassed() throws IOException {
        try (PagewiseDirectory directory = pagewise(new PagewiseDirectoryFactory()
                .newFSDirectory(createTempDir(), SimpleFSLockFactory.INSTANCE, indexSettings(Settings.EMPTY)));
             Lock lock = directory.obtainLock("write.lock")) {
            assertTrue(lock.toString(), lock.getClass().getName().startsWith(SimpleFSLockFactory.class.getName()));
        }
    }

    /**
     * A mapped read of one byte with a RANDOM hint, as a search reads stored fields, faults in that page, not the
     * kernel's readahead around it (read_ahead_kb: 8 MiB on this project's disks, 128 KiB on most).
     */
    public void testMappedReadsFollowTheContextsHint() throws IOException {
        assumeTrue("residency needs the native library: " + Native.loadError(), Native.isAvailable());
        // On disk, not tmpfs, whose pages never leave memory.
        Path dir = createTempDir();
        try (PagewiseDirectory directory = pagewise(new PagewiseDirectoryFactory()
                .newFSDirectory(dir, NativeFSLockFactory.INSTANCE, indexSettings(Settings.EMPTY)))) {
            byte[] block = new byte[1 << 20];
            random().nextBytes(block);
            try (IndexOutput out = directory.createOutput("_0.fdt", IOContext.DEFAULT)) {
                for (int i = 0; i < 8; i++) out.writeBytes(block, block.length);
            }
            directory.sync(java.util.List.of("_0.fdt"));
            PageCache.evict(dir.resolve("_0.fdt"));
            assertEquals(0, PageCache.residency(dir.resolve("_0.fdt")).residentPages());
            try (IndexInput in = directory.openInput("_0.fdt",
                    IOContext.DEFAULT.withHints(DataAccessHint.RANDOM, FileTypeHint.DATA))) {
                in.seek(4 << 20);
                in.readByte();
            }
            Residency after = PageCache.residency(dir.resolve("_0.fdt"));
            assertTrue("pages cached by a one-byte read: " + after, after.residentPages() <= 16);
        }
    }
}

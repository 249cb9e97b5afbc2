package io.pagewise.lucene;

import io.pagewise.AccessHint;
import io.pagewise.CacheMode;
import io.pagewise.CacheState;
import io.pagewise.Native;
import io.pagewise.PageCache;
import io.pagewise.Residency;
import io.pagewise.StorageFile;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiPredicate;
import org.apache.lucene.index.IndexFileNames;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.store.FSDirectory;
import org.apache.lucene.store.FSLockFactory;
import org.apache.lucene.store.IOContext;
import org.apache.lucene.store.IndexInput;
import org.apache.lucene.store.IndexOutput;
import org.apache.lucene.store.LockFactory;
import org.apache.lucene.store.MMapDirectory;

/**
 * A Lucene {@link org.apache.lucene.store.Directory} that chooses, per I/O context and file type, how each file uses
 * the page cache ({@link PolicyTable}). With the defaults ({@link #open(Path)}): searches read through memory
 * mappings, as {@link MMapDirectory} does; merges and checksum checks read through pagewise and keep nothing they
 * brought into the cache; merges and flushes write a new segment cached only when the segments around it are.
 *
 * <pre>{@code
 * try (Directory dir = PagewiseDirectory.open(path);
 *      IndexWriter writer = new IndexWriter(dir, new IndexWriterConfig())) { ... }
 *
 * PagewiseDirectory dir = PagewiseDirectory.builder(path)
 *         .policy(ContextKind.MERGE, "vec", FilePolicy.of(CacheMode.DIRECT, AccessHint.SEQUENTIAL))
 *         .build();
 * }</pre>
 *
 * <p>It is an {@link MMapDirectory} whose merges, flushes and read-once reads go through pagewise: listing,
 * deleting, renaming, {@link #sync} and {@link #syncMetaData} are FSDirectory's, so a commit is exactly as durable
 * as with Lucene's own directories, and MMapDirectory's settings (preload, grouping) apply to the mapped reads. It works on Lucene 9.12 and
 * 10. Where the pagewise native library does not load, every policy whose mode needs it runs in WRITEBACK, and
 * the directory says so once, through {@link System.Logger}.
 */
public final class PagewiseDirectory extends MMapDirectory {
    private static final System.Logger LOG = System.getLogger(PagewiseDirectory.class.getName());
    private static final AtomicBoolean TOLD_PURE_JAVA = new AtomicBoolean();
    /**
     * The merge read window unless the builder sets another: 1 MiB. In a 1,100 MiB memory cgroup a force-merge of
     * 1.6 GB then held about 170 MB of its sources at a time, where EVICT's own windows and the kernel's readahead
     * held 677 MB and pushed an idle index out. 2 MiB windows held 270 MB, too much beside a JDK 25 JVM that had
     * merged before (350 MB of its own): the idle index kept only 69–91 % (docs/LUCENE.md, Measured).
     */
    public static final long DEFAULT_MERGE_READ_WINDOW = 1L << 20;
    private final PolicyTable policies;
    private final long mergeReadWindow;
    private final boolean asyncWrites;
    private final IoTally tally = new IoTally();
    private final BeingRead beingRead = new BeingRead();
    private final Neighbours neighbours = new Neighbours();
    /** The files MMapDirectory is told to preload ({@link #setPreload}), which are mapped whatever their policy. */
    private volatile BiPredicate<String, IOContext> preload = MMapDirectory.NO_FILES;

    private PagewiseDirectory(Path path, LockFactory locks, PolicyTable policies, long mapChunkBytes,
            long mergeReadWindow, boolean asyncWrites) throws IOException {
        super(path, locks, mapChunkBytes);
        this.policies = policies;
        this.mergeReadWindow = mergeReadWindow;
        this.asyncWrites = asyncWrites;
        if (!Native.isAvailable() && TOLD_PURE_JAVA.compareAndSet(false, true)) {
            LOG.log(System.Logger.Level.WARNING, "pagewise: the native library is " + Native.loadError().getMessage()
                    + "; PagewiseDirectory reads and writes every file in WRITEBACK (kept in the page cache)");
        }
    }

    /**
     * {@return a directory with the default policies}, locked with the file system's native locks as
     * {@link FSDirectory#open(Path)} does
     *
     * @param path the index directory; made when missing
     * @throws IOException when the directory cannot be made
     */
    public static PagewiseDirectory open(Path path) throws IOException {
        return builder(path).build();
    }

    /**
     * {@return a builder for a directory at path}
     *
     * @param path the index directory
     */
    public static Builder builder(Path path) {
        return new Builder(path);
    }

    /** {@return whether merges and flushes write asynchronously where they can ({@link Builder#asyncWrites})} */
    public boolean asyncWrites() {
        return asyncWrites;
    }

    /** {@return the policy table in use} */
    public PolicyTable policies() {
        return policies;
    }

    @Override
    public IndexInput openInput(String name, IOContext context) throws IOException {
        ensureOpen();
        ensureCanRead(name);
        ContextKind kind = Contexts.kindOf(context);
        String type = fileType(name);
        FilePolicy policy = policies.policy(kind, type);
        IoTally.Counter counter = tally.counter(type, kind);
        CacheMode mode = usable(policy.mode());
        if (mode.needsNative() == false || preload.test(name, context)) {
            IndexInput input = super.openInput(name, context);
            counter.mapped(input.length());
            return input;
        }
        Path path = getDirectory().resolve(name);
        // Measured once: the neighbours rule and the merge read window both ask what was cached before the input.
        Residency atOpen = mode.evictsBehind() ? PageCache.residency(path) : null;
        Runnable forget = atOpen != null ? beingRead.remember(name, atOpen) : null;
        long window = readWindow(kind, atOpen);
        StorageFile file;
        try {
            // A windowed input drops behind and reads ahead itself; the mode's own tracking of each read would only
            // repeat that, and its code was compiled again in a large merge's first seconds, beside the searches.
            file = StorageFile.open(path, window > 0 ? CacheMode.WRITEBACK : mode, StandardOpenOption.READ);
        } catch (IOException | RuntimeException e) {
            if (forget != null) forget.run();
            throw e;
        }
        try {
            if (window > 0) {
                file.advise(AccessHint.RANDOM); // the input reads ahead itself, in windows
            } else if (policy.hint() != AccessHint.NORMAL) {
                file.advise(policy.hint());
            }
            String description = "StorageIndexInput(path=\"" + path + "\", " + mode
                    + (window > 0 ? ", read in windows of " + (window >> 10) + " KiB" : "") + ")";
            return new StorageIndexInput(description, file, 0, file.size(), counter, window, forget);
        } catch (IOException | RuntimeException e) {
            try {
                file.close();
            } finally {
                if (forget != null) forget.run();
            }
            throw e;
        }
    }

    /**
     * Sets which files are preloaded, as MMapDirectory does: a file it selects is memory-mapped and loaded, whatever
     * its policy, since preloading asks for the file in memory. Only a rule set here overrides the policies.
     *
     * @param preload which files, by name and context, to preload
     */
    @Override
    public void setPreload(BiPredicate<String, IOContext> preload) {
        super.setPreload(preload);
        this.preload = Objects.requireNonNull(preload, "preload");
    }

    /**
     * The window a merge input reads ahead and drops behind in ({@link Builder#mergeReadWindow}), or 0: for merges
     * in a mode that evicts behind, of files nothing of which was cached when opened (else the pages cached are
     * someone's, and the mode's own eviction, which keeps them, does the work).
     */
    private long readWindow(ContextKind kind, Residency atOpen) {
        if (mergeReadWindow == 0 || kind != ContextKind.MERGE || atOpen == null) return 0;
        return atOpen.residentPages() == 0 ? mergeReadWindow : 0;
    }

    @Override
    public IndexOutput createOutput(String name, IOContext context) throws IOException {
        // FSDirectory makes the file (CREATE_NEW, with its rules for files pending deletion); it is written here.
        super.createOutput(name, context).close();
        return reopen(name, context);
    }

    @Override
    public IndexOutput createTempOutput(String prefix, String suffix, IOContext context) throws IOException {
        IndexOutput made = super.createTempOutput(prefix, suffix, context);
        made.close();
        return reopen(made.getName(), context);
    }

    private IndexOutput reopen(String name, IOContext context) throws IOException {
        ContextKind kind = Contexts.kindOf(context);
        String type = fileType(name);
        FilePolicy policy = policies.policy(kind, type);
        CacheMode mode = usable(writeMode(policy, name, type));
        Path path = getDirectory().resolve(name);
        StorageFile file;
        try {
            file = StorageFile.open(path, mode, StandardOpenOption.WRITE);
        } catch (IOException | RuntimeException e) {
            try {
                Files.deleteIfExists(path);
            } catch (IOException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
        try {
            if (policy.hint() != AccessHint.NORMAL) file.advise(policy.hint());
        } catch (IOException | RuntimeException e) {
            file.close();
            throw e;
        }
        return new StorageIndexOutput("StorageIndexOutput(path=\"" + path + "\", " + mode + ")", name, file,
                tally.counter(type, kind), asyncWrites && (kind == ContextKind.MERGE || kind == ContextKind.FLUSH));
    }

    /** The mode a new file is written in: a policy that follows its neighbours keeps it cached when they are. */
    private CacheMode writeMode(FilePolicy policy, String name, String type) throws IOException {
        if (!policy.followsNeighbours() || !Native.isAvailable()) return policy.mode();
        return neighbours.atStartOf(name).cached(type) ? CacheMode.WRITEBACK : policy.mode();
    }

    /**
     * What the files beside a new one held in the page cache: for a file of a segment, measured once, when the
     * segment's first file is made, and kept for its other files. A merge beside a near-real-time reader reads its
     * sources through the reader's mappings, which no input of this directory sees; measured later, the sources it
     * has read would count as cached and make the segment's last files (its compound file) kept.
     */
    private final class Neighbours {
        /** Per segment and generation; bounded, since a segment whose writing failed never writes its .si. */
        private final Map<String, Snapshot> bySegment = new java.util.LinkedHashMap<>(16, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, Snapshot> eldest) {
                return size() > 64;
            }
        };

        Snapshot atStartOf(String name) throws IOException {
            String segment = segmentKey(name);
            if (segment == null) return measure(name);
            synchronized (bySegment) {
                Snapshot snapshot = bySegment.get(segment);
                if (snapshot == null) {
                    snapshot = measure(name);
                    bySegment.put(segment, snapshot);
                }
                // A segment's .si is its last file: later files of that name are updates, measured afresh.
                if (name.endsWith(".si")) bySegment.remove(segment);
                return snapshot;
            }
        }

        /** {@return the segment and generation a file belongs to, or null for files of no segment} */
        private static String segmentKey(String name) {
            if (!name.startsWith("_")) return null;
            long generation;
            try {
                generation = IndexFileNames.parseGeneration(name);
            } catch (NumberFormatException notAGeneration) {
                generation = 0; // a codec's temporary file, such as _a_Lucene90FieldsIndex-doc_ids_0.tmp
            }
            return IndexFileNames.parseSegmentName(name) + "/" + generation;
        }

        /** {@return the pages the directory's files but name hold, per file type}, before any open merge read them */
        private Snapshot measure(String name) throws IOException {
            Map<String, long[]> byType = new java.util.HashMap<>();
            long[] all = new long[2];
            for (String other : listAll()) {
                if (other.equals(name) || other.equals(IndexWriter.WRITE_LOCK_NAME)) continue;
                Path path = getDirectory().resolve(other);
                // Only files hold pages: a subdirectory (which listAll names too) is no neighbour.
                if (!Files.isRegularFile(path)) continue;
                // A file a merge is reading holds the pages of its reads while open: what counts is what it held before.
                Residency residency = beingRead.before(other);
                try {
                    if (residency == null) residency = PageCache.residency(path);
                } catch (NoSuchFileException deletedMeanwhile) {
                    continue;
                }
                long[] sums = byType.computeIfAbsent(fileType(other), t -> new long[2]);
                sums[0] += residency.residentPages();
                sums[1] += residency.totalPages();
                all[0] += residency.residentPages();
                all[1] += residency.totalPages();
            }
            return new Snapshot(byType, all);
        }
    }

    /** The pages cached and in all, per file type and over all files, of a new file's neighbours. */
    private record Snapshot(Map<String, long[]> byType, long[] all) {
        /**
         * Whether the neighbours are at least {@link FilePolicy#KEEP_WHEN_NEIGHBOURS_CACHED} cached, by pages: those of
         * the type, or all files when there are none of it. No neighbours count as cached: the first segment of a
         * new index is what its first reader opens.
         */
        boolean cached(String type) {
            long[] basis = byType.getOrDefault(type, all);
            if (basis[1] == 0) basis = all;
            return basis[1] == 0 || basis[0] >= FilePolicy.KEEP_WHEN_NEIGHBOURS_CACHED * basis[1];
        }
    }

    /**
     * The files open for reading in a mode that evicts behind it, with how much of each was cached when the first
     * such input opened it: while open, such an input keeps up to 16 MiB of what it read cached, and a merge reads
     * every file of the segments it merges, so a merge of cold segments would otherwise take them for cached.
     */
    private static final class BeingRead {
        private final Map<String, Residency> before = new java.util.HashMap<>();
        private final Map<String, Integer> inputs = new java.util.HashMap<>();

        /** Notes that an input opens a file; {@return what to run when it closes} */
        Runnable remember(String name, Residency now) {
            synchronized (this) {
                if (inputs.merge(name, 1, Integer::sum) == 1) before.put(name, now);
            }
            AtomicBoolean forgotten = new AtomicBoolean();
            return () -> {
                if (forgotten.compareAndSet(false, true)) forget(name);
            };
        }

        private synchronized void forget(String name) {
            if (inputs.merge(name, -1, Integer::sum) == 0) {
                inputs.remove(name);
                before.remove(name);
            }
        }

        /** {@return how much of a file was cached before it was opened, or null when no such input has it open} */
        synchronized Residency before(String name) {
            return before.get(name);
        }
    }

    /** The mode itself where it can be used in this JVM, else WRITEBACK (the pure-Java path). */
    private static CacheMode usable(CacheMode mode) {
        return mode.isAvailable() ? mode : CacheMode.WRITEBACK;
    }

    /** {@return the file type the policy table and the counters know a file by: its extension, or ""} */
    static String fileType(String name) {
        String extension = IndexFileNames.getExtension(name);
        return extension == null ? "" : extension;
    }

    /** {@return the bytes read, written and mapped since the directory was opened, per file type and context} */
    public List<FileTypeIo> ioByFileType() {
        return tally.snapshot();
    }

    /**
     * {@return what the page cache holds now of each file type in the directory's files (subdirectories are left
     * out)}, read with cachestat (Linux 6.5 and later) or mincore
     *
     * @throws IOException when the directory cannot be listed
     * @throws UnsupportedOperationException when the native library is not loaded
     */
    public List<FileTypeCache> cachedByFileType() throws IOException {
        ensureOpen();
        Map<String, long[]> byType = new TreeMap<>();
        for (String name : listAll()) {
            Path path = getDirectory().resolve(name);
            if (!Files.isRegularFile(path)) continue;
            long size;
            long cached;
            long dirty = 0;
            try {
                size = Files.size(path);
                Optional<CacheState> state = PageCache.cacheState(path);
                if (state.isPresent()) {
                    cached = state.get().cached() * state.get().pageSize();
                    dirty = state.get().dirty() * state.get().pageSize();
                } else {
                    cached = PageCache.residency(path).residentBytes();
                }
            } catch (NoSuchFileException deletedMeanwhile) {
                continue;
            }
            long[] sums = byType.computeIfAbsent(fileType(name), type -> new long[4]);
            sums[0]++;
            sums[1] += size;
            sums[2] += Math.min(cached, size);
            sums[3] += Math.min(dirty, size);
        }
        List<FileTypeCache> rows = new ArrayList<>();
        byType.forEach((type, s) -> rows.add(new FileTypeCache(type, (int) s[0], s[1], s[2], s[3])));
        return rows;
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "@" + getDirectory() + " lockFactory=" + lockFactory + " policies={"
                + policies + "}";
    }

    /** Sets a directory's lock factory, policy table and memory-mapping chunk size. */
    public static final class Builder {
        private final Path path;
        private final PolicyTable.Builder table = PolicyTable.builder();
        private PolicyTable wholeTable;
        private LockFactory locks = FSLockFactory.getDefault();
        private long mapChunkBytes = MMapDirectory.DEFAULT_MAX_CHUNK_SIZE;
        private long mergeReadWindow = DEFAULT_MERGE_READ_WINDOW;
        private boolean asyncWrites = true;

        private Builder(Path path) {
            this.path = Objects.requireNonNull(path, "path");
        }

        /**
         * Sets the policy of a context for every file type without a cell of its own.
         *
         * @param kind   the I/O context
         * @param policy its policy
         * @return this builder
         */
        public Builder policy(ContextKind kind, FilePolicy policy) {
            table.policy(kind, policy);
            return this;
        }

        /**
         * Sets the policy of one file type in a context.
         *
         * @param kind     the I/O context
         * @param fileType the extension, without the dot
         * @param policy   its policy
         * @return this builder
         */
        public Builder policy(ContextKind kind, String fileType, FilePolicy policy) {
            table.policy(kind, fileType, policy);
            return this;
        }

        /**
         * Uses a whole table, in place of the cells set on this builder.
         *
         * @param policies the table
         * @return this builder
         */
        public Builder policies(PolicyTable policies) {
            this.wholeTable = Objects.requireNonNull(policies, "policies");
            return this;
        }

        /**
         * Sets the lock factory; FSLockFactory's default (native file locks) when not set.
         *
         * @param lockFactory the lock factory
         * @return this builder
         */
        public Builder lockFactory(LockFactory lockFactory) {
            this.locks = Objects.requireNonNull(lockFactory, "lockFactory");
            return this;
        }

        /**
         * Sets the largest piece a memory-mapped file is mapped in, as MMapDirectory's constructor takes it: a size
         * that is not a power of two is rounded down to one.
         *
         * @param bytes the chunk size, positive
         * @return this builder
         * @throws IllegalArgumentException when bytes is not positive
         */
        public Builder mapChunkBytes(long bytes) {
            if (bytes <= 0) {
                throw new IllegalArgumentException("map chunk of " + bytes + " bytes: must be positive");
            }
            this.mapChunkBytes = bytes;
            return this;
        }

        /**
         * Makes merge reads of files that were not cached at all when opened read ahead and drop behind themselves,
         * in windows of this size, with the kernel's readahead off: each reader holds about three windows,
         * where the mode's own eviction keeps up to 16 MiB behind it and the kernel's readahead ahead of it, per
         * file, while the file is open (and a merge holds every source file open to its end). 0 turns it off; the
         * default is {@link #DEFAULT_MERGE_READ_WINDOW}.
         *
         * @param bytes the window, a multiple of 4 KiB; 0 for off
         * @return this builder
         * @throws IllegalArgumentException when bytes is negative or not a multiple of 4 KiB
         */
        public Builder mergeReadWindow(long bytes) {
            if (bytes < 0 || bytes % 4096 != 0) {
                throw new IllegalArgumentException("merge read window of " + bytes + " bytes: must be 0 or a"
                        + " positive multiple of 4096");
            }
            this.mergeReadWindow = bytes;
            return this;
        }

        /**
         * Whether the files merges and flushes make, in EVICT and DIRECT (their default policies' mode), write their
         * full buffers on the io_uring ring, up to four at a time, while the writer fills the next, where the ring is there
         * ({@link io.pagewise.Native#asyncPath()}). On: the merge thread does not wait for each O_DIRECT write
         * (merges as fast as MMapDirectory's in docs/LUCENE.md's workload), and so keeps its CPU busy; off: it waits,
         * leaving the CPU to searches meanwhile (on 2 CPUs, the search p99 during a merge rose less). The default is
         * on.
         *
         * @param on whether to write asynchronously
         * @return this builder
         */
        public Builder asyncWrites(boolean on) {
            this.asyncWrites = on;
            return this;
        }

        /**
         * {@return the directory}
         *
         * @throws IOException when the directory cannot be made
         */
        public PagewiseDirectory build() throws IOException {
            return new PagewiseDirectory(path, locks, wholeTable != null ? wholeTable : table.build(), mapChunkBytes,
                    mergeReadWindow, asyncWrites);
        }
    }
}

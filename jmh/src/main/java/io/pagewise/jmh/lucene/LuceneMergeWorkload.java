package io.pagewise.jmh.lucene;

import io.pagewise.PageCache;
import io.pagewise.jmh.Percentiles;
import io.pagewise.Residency;
import io.pagewise.lucene.ContextKind;
import io.pagewise.lucene.FileTypeIo;
import io.pagewise.lucene.PagewiseDirectory;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;
import org.apache.lucene.analysis.standard.StandardAnalyzer;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.StoredField;
import org.apache.lucene.document.StringField;
import org.apache.lucene.document.TextField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.NoMergePolicy;
import org.apache.lucene.index.SerialMergeScheduler;
import org.apache.lucene.index.StoredFields;
import org.apache.lucene.index.Term;
import org.apache.lucene.index.TieredMergePolicy;
import org.apache.lucene.misc.store.DirectIODirectory;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.TermQuery;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.store.Directory;
import org.apache.lucene.store.IOContext;
import org.apache.lucene.store.IndexInput;
import org.apache.lucene.store.MMapDirectory;
import org.apache.lucene.store.NIOFSDirectory;

/**
 * A force-merge beside a searched and an idle index, all three through one Directory class (jmh/lucene-merge.sh
 * runs it in a memory cgroup and summarizes). Two commands:
 *
 * <pre>
 * build ROOT SEARCHED_DOCS IDLE_DOCS MERGE_DOCS MERGE_SEGMENTS   indices under ROOT (searched, idle, merge), once
 * run DIRECTORY SEARCHED IDLE MERGE LINKS [CGROUP]                one measured run; prints one RESULT line
 * </pre>
 *
 * A run evicts all three indices, reads the idle one whole through the directory (DEFAULT context) and closes it,
 * warms the searched one (read whole, then 3 s of queries), searches it for the "before" phase, then force-merges
 * MERGE (a copy: it is rewritten) to one segment while the searcher goes on ("during"). The merge's source files
 * are hard-linked into LINKS before the merge, so their residency can be read after it although IndexWriter
 * deletes their names: the pages a merge read and left behind. Documents come from a fixed seed: words of a fixed
 * vocabulary, a few stored fields, about 1 KB each. With -Dwarm.merge.docs=N the run first merges N documents of its
 * own through the same directory class, so that the merge measured is not the JVM's first (see warmUpMerge).
 */
public final class LuceneMergeWorkload {
    private static final int VOCABULARY = 100_000;
    private static final String[] WORDS = vocabulary();
    private static final long BEFORE_NANOS = Long.getLong("before.seconds", 10) * 1_000_000_000L;
    private static final long WARM_NANOS = 3_000_000_000L;
    /** Documents of the warm-up merge (-Dwarm.merge.docs; 0: none, the merge measured is the JVM's first). */
    private static final int WARM_MERGE_DOCS = Integer.getInteger("warm.merge.docs", 0);
    private static final int WARM_MERGE_SEGMENTS = 10;
    /**
     * How many times the warm-up's segments are merged (-Dwarm.merges), each time from a fresh copy of them (hard
     * links): one merge of small segments leaves code that only a large merge makes hot to be compiled during the
     * merge measured.
     */
    private static final int WARM_MERGES = Integer.getInteger("warm.merges", 1);
    /**
     * Whether the warm-up merges run while the searched index is searched (-Dwarm.beside.searches=true), as the
     * merge measured does: code that both call (Lucene's postings and stored-fields readers) is then compiled for
     * both kinds of input before the measurement, not recompiled in its first seconds.
     */
    private static final boolean WARM_BESIDE_SEARCHES = Boolean.getBoolean("warm.beside.searches");
    /** How long the searcher goes on after its warm-up, at most, until the JIT compilers are quiet. */
    private static final long QUIET_JIT_MAX_NANOS = 20_000_000_000L;

    private LuceneMergeWorkload() {}

    public static void main(String[] args) throws Exception {
        if (args.length == 6 && args[0].equals("build")) {
            build(Path.of(args[1]), Integer.parseInt(args[2]), Integer.parseInt(args[3]), Integer.parseInt(args[4]),
                    Integer.parseInt(args[5]));
        } else if ((args.length == 6 || args.length == 7) && args[0].equals("run")) {
            run(args[1], Path.of(args[2]), Path.of(args[3]), Path.of(args[4]), Path.of(args[5]),
                    args.length == 7 ? Path.of(args[6]) : null);
        } else {
            System.err.println("usage: build ROOT SEARCHED_DOCS IDLE_DOCS MERGE_DOCS MERGE_SEGMENTS"
                    + " | run mmap|niofs|directio|pagewise SEARCHED IDLE MERGE LINKS [CGROUP]");
            System.exit(2);
        }
    }

    // ---- the indices ----

    /** Words a..., unique by their base-26 tail, with a random head so their lengths vary (3 to 12 letters). */
    private static String[] vocabulary() {
        SplittableRandom random = new SplittableRandom(20_381);
        String[] words = new String[VOCABULARY];
        StringBuilder word = new StringBuilder();
        for (int i = 0; i < VOCABULARY; i++) {
            word.setLength(0);
            int head = 1 + random.nextInt(6);
            for (int c = 0; c < head; c++) word.append((char) ('a' + random.nextInt(26)));
            for (int n = i; ; n /= 26) {
                word.append((char) ('a' + n % 26));
                if (n < 26) break;
            }
            words[i] = word.toString();
        }
        return words;
    }

    /** A word, skewed to the head of the vocabulary (rank = V * u^2), as text is. */
    private static String word(SplittableRandom random) {
        double u = random.nextDouble();
        return WORDS[(int) (VOCABULARY * u * u)];
    }

    private static String words(SplittableRandom random, int count) {
        StringBuilder text = new StringBuilder(count * 8);
        for (int i = 0; i < count; i++) {
            if (i > 0) text.append(' ');
            text.append(word(random));
        }
        return text.toString();
    }

    private static Document document(SplittableRandom random, long id) {
        Document doc = new Document();
        doc.add(new StringField("id", "doc-" + id, Field.Store.YES));
        doc.add(new TextField("title", words(random, 6 + random.nextInt(6)), Field.Store.YES));
        doc.add(new TextField("body", words(random, 100 + random.nextInt(40)), Field.Store.YES));
        doc.add(new StoredField("timestamp", 1_700_000_000_000L + random.nextLong(1L << 36)));
        doc.add(new StoredField("author", words(random, 2)));
        return doc;
    }

    /** The three indices, side by side (one thread each: the merge one takes longest). */
    static void build(Path root, int searchedDocs, int idleDocs, int mergeDocs, int mergeSegments) throws Exception {
        List<Thread> threads = new ArrayList<>();
        List<Throwable> failures = new java.util.concurrent.CopyOnWriteArrayList<>();
        Object[][] jobs = {{"merge", 3L, mergeDocs, mergeSegments}, {"searched", 1L, searchedDocs, 0},
                {"idle", 2L, idleDocs, 0}};
        for (Object[] job : jobs) {
            Thread thread = new Thread(() -> {
                try {
                    buildOne(root.resolve((String) job[0]), (Long) job[1], (Integer) job[2], (Integer) job[3]);
                } catch (Throwable t) {
                    failures.add(t);
                }
            }, "build-" + job[0]);
            thread.start();
            threads.add(thread);
        }
        for (Thread thread : threads) thread.join();
        if (!failures.isEmpty()) throw new IOException("building the indices failed", failures.get(0));
    }

    /**
     * One index of docs documents in one segment; or, with segments > 0, that many segments, each a copy
     * (IndexWriter.addIndexes) of one segment of docs / segments documents, so that the many-segment index costs the
     * indexing of one segment: a merge reads and rewrites every copy as it would distinct segments.
     */
    private static void buildOne(Path path, long seed, int docs, int segments) throws IOException {
        if (Files.exists(path.resolve("built"))) {
            System.out.println("reusing " + path);
            return;
        }
        long start = System.nanoTime();
        int indexed = segments > 0 ? (docs + segments - 1) / segments : docs;
        Path single = segments > 0 ? path.resolveSibling(path.getFileName() + ".segment") : path;
        SplittableRandom random = new SplittableRandom(seed);
        try (Directory dir = new NIOFSDirectory(single); IndexWriter writer = new IndexWriter(dir, config())) {
            for (long id = 0; id < indexed; id++) writer.addDocument(document(random, id));
            writer.forceMerge(1);
            writer.commit();
        }
        if (segments > 0) {
            IndexWriterConfig config = config();
            config.setMergePolicy(NoMergePolicy.INSTANCE);
            try (Directory from = new NIOFSDirectory(single); Directory dir = new NIOFSDirectory(path);
                 IndexWriter writer = new IndexWriter(dir, config)) {
                for (int i = 0; i < segments; i++) writer.addIndexes(from);
                writer.commit();
            }
            for (Path file : indexFiles(single)) Files.delete(file);
            Files.deleteIfExists(single.resolve(IndexWriter.WRITE_LOCK_NAME));
            Files.delete(single);
        }
        Files.createFile(path.resolve("built"));
        System.out.printf(Locale.ROOT, "built %s: %d docs, %d files, %.1f MB in %.1f s%n", path,
                segments > 0 ? (long) indexed * segments : docs, indexFiles(path).size(), bytes(path) / 1e6,
                (System.nanoTime() - start) / 1e9);
    }

    private static IndexWriterConfig config() {
        IndexWriterConfig config = new IndexWriterConfig(new StandardAnalyzer());
        config.setOpenMode(IndexWriterConfig.OpenMode.CREATE);
        config.setUseCompoundFile(false);
        TieredMergePolicy policy = new TieredMergePolicy();
        policy.setNoCFSRatio(0.0);
        config.setMergePolicy(policy);
        config.setRAMBufferSizeMB(256);
        return config;
    }

    // ---- a run ----

    private static Directory open(String kind, Path path) throws IOException {
        switch (kind) {
            case "mmap": return new MMapDirectory(path);
            case "niofs": return new NIOFSDirectory(path);
            case "directio": return new DirectIODirectory(new MMapDirectory(path));
            case "pagewise": return PagewiseDirectory.open(path);
            // The script starts its JVM with -Dpagewise.evict.direct-writes=false.
            case "pagewise-bw": return PagewiseDirectory.open(path);
            // The script starts its JVM with -Dpagewise.lucene.no-allocate-ahead=true.
            case "pagewise-na": return PagewiseDirectory.open(path);
            case "pagewise-nh": return PagewiseDirectory.open(path);
            case "pagewise-sync": return PagewiseDirectory.builder(path).asyncWrites(false).build();
            default:
                // pagewise-mwKIB: PagewiseDirectory whose merge inputs read ahead and drop behind in KIB windows
                if (kind.startsWith("pagewise-mw")) {
                    return PagewiseDirectory.builder(path)
                            .mergeReadWindow(Long.parseLong(kind.substring("pagewise-mw".length())) << 10).build();
                }
                throw new IllegalArgumentException("directory " + kind + ": mmap, niofs, directio, pagewise,"
                        + " pagewise-bw, pagewise-na, pagewise-nh, pagewise-sync or pagewise-mwKIB");
        }
    }

    static void run(String kind, Path searched, Path idle, Path merge, Path links, Path cgroup) throws Exception {
        StringBuilder result = new StringBuilder("RESULT dir=" + kind);
        for (Path index : List.of(searched, idle, merge)) {
            for (Path file : indexFiles(index)) PageCache.evict(file);
        }
        if (WARM_MERGE_DOCS > 0 && !WARM_BESIDE_SEARCHES) {
            warmUpMerge(kind, links.resolveSibling(links.getFileName() + "-warm"));
            if (cgroup != null) Files.writeString(cgroup.resolve("memory.max_usage_in_bytes"), "0");
        }
        try (Directory searchedDir = open(kind, searched); Directory idleDir = open(kind, idle);
             Directory mergeDir = open(kind, merge)) {
            if (WARM_MERGE_DOCS > 0 && WARM_BESIDE_SEARCHES) {
                warmUpMergeBesideSearches(kind, links.resolveSibling(links.getFileName() + "-warm"), searchedDir);
                for (Path file : indexFiles(searched)) PageCache.evict(file);
                if (cgroup != null) Files.writeString(cgroup.resolve("memory.max_usage_in_bytes"), "0");
            }
            readWhole(idleDir);
            readWhole(searchedDir);
            try (DirectoryReader reader = DirectoryReader.open(searchedDir)) {
                Searcher searcher = new Searcher(new IndexSearcher(reader));
                searcher.searchFor(WARM_NANOS);
                if (WARM_MERGE_DOCS > 0) searcher.searchUntilJitQuiet(QUIET_JIT_MAX_NANOS);
                long[] jitGcBefore = jitAndGcMillis();
                long[] before = searcher.searchFor(BEFORE_NANOS);
                long[] jitGcAfterBefore = jitAndGcMillis();
                Files.createDirectories(links);
                List<Path> sources = new ArrayList<>();
                for (Path file : indexFiles(merge)) {
                    Path link = links.resolve(file.getFileName());
                    Files.createLink(link, file);
                    sources.add(link);
                }
                long sourceBytes = 0;
                for (Path file : sources) sourceBytes += Files.size(file);
                double searchedBefore = percent(residency(indexFiles(searched)));
                double idleBefore = percent(residency(indexFiles(idle)));
                long[] sourcesBefore = residency(sources);
                long cacheBefore = cgroupStat(cgroup, "total_cache");

                Merge merging = new Merge(mergeDir, sources, cgroup);
                Thread thread = new Thread(merging, "merge");
                thread.start();
                Sampler sampler = new Sampler(sources, cgroup, thread);
                Thread sampling = new Thread(sampler, "sampler");
                sampling.setDaemon(true);
                sampling.start();
                long[] jitGcStart = jitAndGcMillis();
                System.out.printf(Locale.ROOT, "merge started at JVM uptime %d ms%n",
                        java.lang.management.ManagementFactory.getRuntimeMXBean().getUptime());
                long[] during = searcher.searchWhile(thread, "merge");
                long[] jitGcEnd = jitAndGcMillis();
                sampling.join();
                merging.rethrow();

                double searchedAfter = percent(residency(indexFiles(searched)));
                double idleAfter = percent(residency(indexFiles(idle)));
                TreeSet<String> sourceNames = new TreeSet<>();
                for (Path file : sources) sourceNames.add(file.getFileName().toString());
                List<Path> output = new ArrayList<>();
                for (Path file : indexFiles(merge)) {
                    if (!sourceNames.contains(file.getFileName().toString())) output.add(file);
                }
                long[] outputResidency = residency(output);
                long outputBytes = 0;
                for (Path file : output) outputBytes += Files.size(file);
                long mergeReadBytes = -1;
                if (mergeDir instanceof PagewiseDirectory) { // also counts the merge's checksum pass
                    mergeReadBytes = 0;
                    for (FileTypeIo row : ((PagewiseDirectory) mergeDir).ioByFileType()) {
                        if (row.kind() == ContextKind.MERGE) mergeReadBytes += row.bytesRead();
                        System.out.println("io " + row);
                    }
                }
                long pageSize = PageCache.pageSize();
                long leftBytes = (merging.sourcesAfter[0] - sourcesBefore[0]) * pageSize;
                Arrays.sort(before);
                Arrays.sort(during);
                result.append(String.format(Locale.ROOT,
                        " p50_before_ms=%.4f p99_before_ms=%.4f p50_during_ms=%.4f p99_during_ms=%.4f"
                                + " queries_before=%d queries_during=%d merge_s=%.2f"
                                + " searched_before_pct=%.2f searched_after_pct=%.2f"
                                + " idle_before_pct=%.2f idle_after_pct=%.2f"
                                + " output_cached_pct=%.2f output_mb=%.1f"
                                + " sources_mb=%.1f sources_cached_before_pct=%.2f left_by_merge_reads_mb=%.1f"
                                + " left_by_merge_reads_pct=%.3f pagewise_merge_read_mb=%.1f"
                                + " cgroup_cache_before_mb=%.1f cgroup_cache_after_merge_mb=%.1f cgroup_peak_mb=%.1f"
                                + " sources_cached_peak_mb=%.1f cgroup_cache_peak_mb=%.1f"
                                + " warm_merge_docs=%d warm_merges=%d jit_before_ms=%d jit_during_ms=%d gc_before_ms=%d gc_during_ms=%d"
                                + " merge_alloc_mb=%.1f cgroup_rss_peak_mb=%.1f",
                        Percentiles.millis(before, 0.50), Percentiles.millis(before, 0.99),
                        Percentiles.millis(during, 0.50), Percentiles.millis(during, 0.99), before.length, during.length,
                        merging.seconds,
                        searchedBefore, searchedAfter, idleBefore, idleAfter,
                        percent(outputResidency), outputBytes / 1e6,
                        sourceBytes / 1e6, percent(sourcesBefore), leftBytes / 1e6,
                        100.0 * (merging.sourcesAfter[0] - sourcesBefore[0]) / Math.max(1, sourcesBefore[1]),
                        mergeReadBytes / 1e6, cacheBefore / 1e6, merging.cgroupCacheAfter / 1e6,
                        cgroupValue(cgroup, "memory.max_usage_in_bytes") / 1e6, sampler.sourcesPeak / 1e6,
                        sampler.cachePeak / 1e6, WARM_MERGE_DOCS, WARM_MERGES, jitGcAfterBefore[0] - jitGcBefore[0],
                        jitGcEnd[0] - jitGcStart[0], jitGcAfterBefore[1] - jitGcBefore[1],
                        jitGcEnd[1] - jitGcStart[1], merging.allocated / 1e6, sampler.rssPeak / 1e6));
            }
        }
        for (Path file : indexFiles(links)) Files.delete(file);
        Files.deleteIfExists(links);
        System.out.println(result);
    }

    /**
     * A JVM that has merged before, as a node that merges all day: WARM_MERGE_DOCS documents written through the
     * same Directory class in WARM_MERGE_SEGMENTS segments, evicted, force-merged to one and deleted, so that the
     * measured merge does not run beside the JIT compiling Lucene's merge code for the first time.
     */
    private static void warmUpMerge(String kind, Path path) throws IOException {
        long start = System.nanoTime();
        Files.createDirectories(path);
        SplittableRandom random = new SplittableRandom(11);
        try (Directory dir = open(kind, path)) {
            IndexWriterConfig config = new IndexWriterConfig(new StandardAnalyzer());
            config.setMergePolicy(NoMergePolicy.INSTANCE);
            config.setUseCompoundFile(false);
            try (IndexWriter writer = new IndexWriter(dir, config)) {
                int perSegment = Math.max(1, WARM_MERGE_DOCS / WARM_MERGE_SEGMENTS);
                for (long id = 0; id < WARM_MERGE_DOCS; id++) {
                    writer.addDocument(document(random, id));
                    if ((id + 1) % perSegment == 0) writer.flush();
                }
                writer.commit();
            }
        }
        for (int merge = 1; merge <= WARM_MERGES; merge++) {
            Path copy = path.resolveSibling(path.getFileName() + "-" + merge);
            Files.createDirectories(copy);
            for (Path file : indexFiles(path)) Files.createLink(copy.resolve(file.getFileName()), file);
            try (Directory dir = open(kind, copy)) {
                // Cold sources, as the measured merge's are: the merge takes the same paths through the directory.
                for (Path file : indexFiles(copy)) PageCache.evict(file);
                try (IndexWriter writer = new IndexWriter(dir, forceMergeConfig())) {
                    writer.forceMerge(1);
                    writer.commit();
                }
            }
            deleteTree(copy);
        }
        deleteTree(path);
        System.out.printf(Locale.ROOT, "warm-up merge: %d documents in %d segments, merged %d times, %.1f s%n",
                WARM_MERGE_DOCS, WARM_MERGE_SEGMENTS, WARM_MERGES, (System.nanoTime() - start) / 1e9);
    }

    /** The warm-up merges on a thread of their own while one thread searches the searched index, as measured later. */
    private static void warmUpMergeBesideSearches(String kind, Path path, Directory searchedDir) throws Exception {
        readWhole(searchedDir);
        try (DirectoryReader reader = DirectoryReader.open(searchedDir)) {
            Throwable[] failure = new Throwable[1];
            Thread merging = new Thread(() -> {
                try {
                    warmUpMerge(kind, path);
                } catch (Throwable t) {
                    failure[0] = t;
                }
            }, "warm-up merge");
            merging.start();
            new Searcher(new IndexSearcher(reader)).searchWhile(merging, "warm-up merge");
            merging.join();
            if (failure[0] instanceof Exception e) throw e;
            if (failure[0] != null) throw new RuntimeException(failure[0]);
        }
    }

    private static void deleteTree(Path dir) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            for (Path file : files.toList()) Files.delete(file);
        }
        Files.delete(dir);
    }

    /** A writer on an existing index that merges in the calling thread, to non-compound segments. */
    private static IndexWriterConfig forceMergeConfig() {
        IndexWriterConfig config = new IndexWriterConfig(new StandardAnalyzer());
        config.setOpenMode(IndexWriterConfig.OpenMode.APPEND);
        config.setMergeScheduler(new SerialMergeScheduler());
        TieredMergePolicy policy = new TieredMergePolicy();
        policy.setNoCFSRatio(0.0);
        config.setMergePolicy(policy);
        config.setUseCompoundFile(false);
        return config;
    }

    /** {milliseconds the JIT compilers have spent, milliseconds of GC} since the JVM started. */
    static long[] jitAndGcMillis() {
        var compiler = java.lang.management.ManagementFactory.getCompilationMXBean();
        long jit = compiler != null && compiler.isCompilationTimeMonitoringSupported()
                ? compiler.getTotalCompilationTime() : -1;
        long gc = 0;
        for (var collector : java.lang.management.ManagementFactory.getGarbageCollectorMXBeans()) {
            gc += Math.max(0, collector.getCollectionTime());
        }
        return new long[] {jit, gc};
    }

    /** The force-merge, on its own thread; the sources' residency is read the moment forceMerge returns. */
    private static final class Merge implements Runnable {
        private final Directory dir;
        private final List<Path> sources;
        private final Path cgroup;
        volatile double seconds;
        volatile long[] sourcesAfter;
        volatile long cgroupCacheAfter = -1;
        /** Bytes of heap the merge thread allocated during forceMerge: its garbage is the searcher's GC pauses. */
        volatile long allocated = -1;
        private volatile Throwable failure;

        Merge(Directory dir, List<Path> sources, Path cgroup) {
            this.dir = dir;
            this.sources = sources;
            this.cgroup = cgroup;
        }

        @Override
        public void run() {
            try {
                IndexWriterConfig config = forceMergeConfig();
                long created = System.nanoTime();
                config.setInfoStream(new org.apache.lucene.util.InfoStream() {
                    @Override
                    public void message(String component, String message) {
                        System.out.printf(Locale.ROOT, "merge phase at %.2f s: %s%n",
                                (System.nanoTime() - created) / 1e9, message);
                    }

                    @Override
                    public boolean isEnabled(String component) {
                        return component.equals("SM"); // SegmentMerger: one line as each part of the merge ends
                    }

                    @Override
                    public void close() {}
                });
                try (IndexWriter writer = new IndexWriter(dir, config)) {
                    var threads = (com.sun.management.ThreadMXBean)
                            java.lang.management.ManagementFactory.getThreadMXBean();
                    long allocatedBefore = threads.getCurrentThreadAllocatedBytes();
                    long start = System.nanoTime();
                    writer.forceMerge(1);
                    seconds = (System.nanoTime() - start) / 1e9;
                    allocated = threads.getCurrentThreadAllocatedBytes() - allocatedBefore;
                    sourcesAfter = residency(sources);
                    cgroupCacheAfter = cgroupStat(cgroup, "total_cache");
                    writer.commit();
                }
            } catch (Throwable t) {
                failure = t;
            }
        }

        void rethrow() throws Exception {
            if (failure instanceof Exception) throw (Exception) failure;
            if (failure != null) throw new RuntimeException(failure);
        }
    }

    /**
     * While the merge runs, every 250 ms: how much of the merge's source files is cached (cachestat, one call per
     * file) and the cgroup's page cache; the peaks of each, in bytes.
     */
    private static final class Sampler implements Runnable {
        private final List<Path> sources;
        private final Path cgroup;
        private final Thread merge;
        volatile long sourcesPeak;
        volatile long cachePeak = -1;
        /** The cgroup's anonymous memory at its largest while the merge ran: the JVM's heap, code and buffers. */
        volatile long rssPeak = -1;

        Sampler(List<Path> sources, Path cgroup, Thread merge) {
            this.sources = sources;
            this.cgroup = cgroup;
            this.merge = merge;
        }

        @Override
        public void run() {
            try {
                while (merge.isAlive()) {
                    long cached = 0;
                    for (Path file : sources) {
                        var state = PageCache.cacheState(file);
                        if (state.isPresent()) cached += state.get().cached() * state.get().pageSize();
                    }
                    sourcesPeak = Math.max(sourcesPeak, cached);
                    long[] memory = cgroupStats(cgroup, "total_cache", "total_rss");
                    cachePeak = Math.max(cachePeak, memory[0]);
                    rssPeak = Math.max(rssPeak, memory[1]);
                    Thread.sleep(250);
                }
            } catch (IOException | InterruptedException e) {
                System.out.println("sampler stopped: " + e);
            }
        }
    }

    /** One thread of term queries, each fetching the stored fields of its first hits; latencies in nanoseconds. */
    private static final class Searcher {
        private final IndexSearcher searcher;
        private final SplittableRandom random = new SplittableRandom(7);
        private long blackhole;

        Searcher(IndexSearcher searcher) {
            this.searcher = searcher;
        }

        long[] searchFor(long nanos) throws IOException {
            long end = System.nanoTime() + nanos;
            Latencies latencies = new Latencies();
            while (System.nanoTime() < end) latencies.add(query());
            return latencies.toArray();
        }

        /**
         * Searches in half-seconds until the JIT compilers spent under 10 ms in one (they have compiled what the
         * searcher and the warm-up merge ran), or max nanos have passed.
         */
        void searchUntilJitQuiet(long max) throws IOException {
            long end = System.nanoTime() + max;
            long jit = jitAndGcMillis()[0];
            while (System.nanoTime() < end) {
                searchFor(500_000_000L);
                long now = jitAndGcMillis()[0];
                if (now - jit < 10) {
                    System.out.printf(Locale.ROOT, "JIT quiet after %d ms of compilation%n", now);
                    return;
                }
                jit = now;
            }
            System.out.println("JIT still compiling after the wait; measuring anyway");
        }

        long[] searchWhile(Thread other, String what) throws IOException {
            Latencies latencies = new Latencies();
            long start = System.nanoTime();
            Latencies second = new Latencies();
            StringBuilder timeline = new StringBuilder();
            long[] jitGc = jitAndGcMillis();
            long secondEnd = start + 1_000_000_000L;
            while (other.isAlive()) {
                long latency = query();
                latencies.add(latency);
                second.add(latency);
                if (System.nanoTime() >= secondEnd) {
                    long[] sorted = second.toArray();
                    Arrays.sort(sorted);
                    long[] now = jitAndGcMillis();
                    timeline.append(String.format(Locale.ROOT, " %.3f(jit %d gc %d)", Percentiles.millis(sorted, 0.99),
                            now[0] - jitGc[0], now[1] - jitGc[1]));
                    jitGc = now;
                    second = new Latencies();
                    secondEnd += 1_000_000_000L;
                }
            }
            // Which part of the merge raises the searcher's p99: one figure per second of it, in ms, with the
            // milliseconds the JIT compilers and the collector spent in that second.
            System.out.println("p99 per second during the " + what + ":" + timeline);
            return latencies.toArray();
        }

        /** A term of the vocabulary's long tail (uniform over the words: most have few postings), top 10, 5 fetched. */
        private long query() throws IOException {
            String term = WORDS[random.nextInt(VOCABULARY)];
            long start = System.nanoTime();
            TopDocs top = searcher.search(new TermQuery(new Term("body", term)), 10);
            StoredFields stored = searcher.storedFields();
            ScoreDoc[] hits = top.scoreDocs;
            for (int i = 0; i < Math.min(5, hits.length); i++) {
                blackhole += stored.document(hits[i].doc).get("id").length();
            }
            return System.nanoTime() - start;
        }
    }

    private static final class Latencies {
        private long[] values = new long[1 << 16];
        private int size;

        void add(long value) {
            if (size == values.length) values = Arrays.copyOf(values, size * 2);
            values[size++] = value;
        }

        long[] toArray() {
            return Arrays.copyOf(values, size);
        }
    }

    /** Reads every file of a directory whole, through the directory, in the DEFAULT context. */
    private static void readWhole(Directory dir) throws IOException {
        byte[] buffer = new byte[1 << 20];
        for (String name : dir.listAll()) {
            if (name.equals("built") || name.equals(IndexWriter.WRITE_LOCK_NAME)) continue;
            try (IndexInput input = dir.openInput(name, IOContext.DEFAULT)) {
                long left = input.length();
                while (left > 0) {
                    int now = (int) Math.min(buffer.length, left);
                    input.readBytes(buffer, 0, now);
                    left -= now;
                }
            }
        }
    }

    /** The index's files: everything but the marker and the write lock. */
    static List<Path> indexFiles(Path dir) throws IOException {
        if (!Files.isDirectory(dir)) return List.of();
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(p -> !p.getFileName().toString().equals("built")
                            && !p.getFileName().toString().equals(IndexWriter.WRITE_LOCK_NAME))
                    .filter(Files::isRegularFile).sorted().toList();
        }
    }

    private static long bytes(Path dir) throws IOException {
        long total = 0;
        for (Path file : indexFiles(dir)) total += Files.size(file);
        return total;
    }

    /** {resident pages, total pages} over files. */
    static long[] residency(List<Path> files) {
        long[] sums = new long[2];
        for (Path file : files) {
            try {
                Residency r = PageCache.residency(file);
                sums[0] += r.residentPages();
                sums[1] += r.totalPages();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return sums;
    }

    private static double percent(long[] sums) {
        return sums[1] == 0 ? 0 : 100.0 * sums[0] / sums[1];
    }

    private static long cgroupValue(Path cgroup, String file) throws IOException {
        if (cgroup == null) return -1;
        return Long.parseLong(Files.readString(cgroup.resolve(file)).trim());
    }

    /** A line of the cgroup's memory.stat, in bytes; -1 without a cgroup. */
    static long cgroupStat(Path cgroup, String key) {
        return cgroupStats(cgroup, key)[0];
    }

    /** Lines of the cgroup's memory.stat, in bytes, from one read of it; -1 for each without a cgroup or line. */
    static long[] cgroupStats(Path cgroup, String... keys) {
        long[] values = new long[keys.length];
        Arrays.fill(values, -1);
        if (cgroup == null) return values;
        try {
            for (String line : Files.readAllLines(cgroup.resolve("memory.stat"))) {
                for (int i = 0; i < keys.length; i++) {
                    String prefix = keys[i] + " ";
                    if (line.startsWith(prefix)) values[i] = Long.parseLong(line.substring(prefix.length()).trim());
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return values;
    }
}

package io.pagewise.opensearch;

import static org.opensearch.test.hamcrest.OpenSearchAssertions.assertAcked;
import static org.opensearch.test.hamcrest.OpenSearchAssertions.assertNoFailures;

import io.pagewise.Native;
import io.pagewise.PageCache;
import io.pagewise.Residency;
import org.apache.lucene.store.FilterDirectory;
import org.opensearch.action.admin.indices.forcemerge.ForceMergeResponse;
import org.opensearch.action.bulk.BulkRequestBuilder;
import org.opensearch.action.bulk.BulkResponse;
import org.opensearch.cluster.ClusterState;
import org.opensearch.cluster.routing.ShardRouting;
import org.opensearch.common.Priority;
import org.opensearch.common.settings.Settings;
import org.opensearch.index.query.QueryBuilders;
import org.opensearch.index.shard.IndexShard;
import org.opensearch.indices.IndicesService;
import org.opensearch.plugins.Plugin;
import org.opensearch.test.OpenSearchIntegTestCase;
import org.opensearch.test.OpenSearchIntegTestCase.ClusterScope;
import org.opensearch.test.OpenSearchIntegTestCase.Scope;
import org.opensearch.transport.client.Client;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * A benchmark, not a test: search latency on a hot index while another index on the same node force-merges and a
 * shard moves in, through one store type (-Dpagewise.bench=pagewise|hybridfs|mmapfs), printing one RESULT line. Run
 * by jmh/opensearch-merge.sh, which puts the test JVM in a memory cgroup; its name matches none of failsafe's
 * patterns, so {@code mvn verify} never runs it, and without the property it is skipped, saying so.
 */
@ClusterScope(scope = Scope.TEST, numDataNodes = 2, numClientNodes = 0, supportsDedicatedMasters = false)
public class PagewiseMergeBench extends OpenSearchIntegTestCase {
    private static final String STORE = System.getProperty("pagewise.bench", "");
    /** Documents of the hot, the merged and the moved index, segments of the merged one, stored bytes per document. */
    private static final int[] SIZES = Arrays.stream(System.getProperty("pagewise.bench.sizes", "30000,90000,12,20000,6000")
            .split(",")).mapToInt(Integer::parseInt).toArray();
    private static final long BEFORE_MS = Long.getLong("pagewise.bench.before_ms", 10_000);
    private static final String CGROUP = System.getenv("PAGEWISE_TEST_CGROUP");
    private static final int VOCABULARY = 2_000;

    @org.junit.BeforeClass
    public static void onlyWhenAsked() {
        if (STORE.isEmpty()) System.out.println("PagewiseMergeBench: skipped, a benchmark: run jmh/opensearch-merge.sh");
        assumeTrue("a benchmark: -Dpagewise.bench=pagewise|hybridfs|mmapfs (jmh/opensearch-merge.sh)", !STORE.isEmpty());
    }

    @Override
    protected Collection<Class<? extends Plugin>> nodePlugins() {
        return List.of(PagewisePlugin.class);
    }

    // The store and the engine as a node has them: no test wrappers, no random index settings.
    @Override
    protected boolean addMockIndexStorePlugin() {
        return false;
    }

    @Override
    protected boolean addMockInternalEngine() {
        return false;
    }

    @Override
    protected void randomIndexTemplate() {}

    public void testSearchWhileMergingAndMovingIn() throws Exception {
        assertTrue("the native library must load (residency is measured with it): " + Native.loadError(), Native.isAvailable());
        String[] names = internalCluster().getNodeNames();
        Arrays.sort(names);
        String node = names[0], other = names[1];
        assertAcked(client().admin().cluster().prepareUpdateSettings().setPersistentSettings(Settings.builder()
                .put("indices.recovery.max_bytes_per_sec", "40mb")));
        createIndex("hot", node, -1);
        createIndex("merge", node, -1);
        createIndex("move", other, -1);
        ensureGreen("hot", "merge", "move");
        long seed = 42;
        long indexing = System.nanoTime();
        index("hot", SIZES[0], 4, seed);
        index("merge", SIZES[1], SIZES[2], seed + 1);
        index("move", SIZES[3], 4, seed + 2);
        long indexingMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - indexing);
        assertEquals("segments of merge", SIZES[2], client().admin().indices().prepareSegments("merge").get().getIndices()
                .get("merge").getShards().values().stream().mapToInt(s -> s.getShards()[0].getSegments().size()).sum());
        System.out.println("directory of hot: " + FilterDirectory.unwrap(shard(node, "hot").store().directory()));

        // The merged and the moved index cold, as after a node's restart; the hot one read wholly and searched.
        Path hotDir = indexPath(node, "hot"), mergeDir = indexPath(node, "merge"), moveSource = indexPath(other, "move");
        for (Path dir : List.of(mergeDir, moveSource)) for (String file : files(dir)) PageCache.evict(dir.resolve(file));
        for (String file : files(hotDir)) PageCache.touch(hotDir.resolve(file));
        Client client = internalCluster().client(node);
        Searcher searcher = new Searcher(client);
        searcher.start();
        Thread.sleep(5_000); // the searches' code compiled before "before" counts
        double hotBefore = percentCached(hotDir, files(hotDir));
        Set<String> mergeSources = files(mergeDir);
        long mergeBytes = bytes(mergeDir, mergeSources), hotBytes = bytes(hotDir, files(hotDir)), moveBytes = bytes(moveSource, files(moveSource));
        long anonymous = cgroupStat("rss");
        resetPeak();
        searcher.phase = 1;
        Thread.sleep(BEFORE_MS);

        searcher.phase = 2;
        long start = System.nanoTime();
        var merge = client().admin().indices().prepareForceMerge("merge").setMaxNumSegments(1).execute();
        assertAcked(client().admin().indices().prepareUpdateSettings("move").setSettings(Settings.builder()
                .put("index.routing.allocation.require._name", node)));
        long moveMs = -1, mergeMs = -1;
        while (moveMs < 0 || mergeMs < 0) {
            if (mergeMs < 0 && merge.isDone()) {
                ForceMergeResponse response = merge.get();
                assertNoFailures(response);
                mergeMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            }
            if (moveMs < 0 && placedOn("move", node) && !client().admin().cluster().prepareHealth("move")
                    .setWaitForNoRelocatingShards(true).setWaitForEvents(Priority.LANGUID).get().isTimedOut()) {
                moveMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            }
            Thread.sleep(50);
            assertTrue("merge and move within 10 minutes", System.nanoTime() - start < TimeUnit.MINUTES.toNanos(10));
        }
        searcher.phase = 3;
        searcher.join();
        long peak = cgroupBytes("memory.max_usage_in_bytes");

        Path moveTarget = indexPath(node, "move");
        Set<String> output = files(mergeDir);
        output.removeAll(mergeSources);
        double hotAfter = percentCached(hotDir, files(hotDir));
        String result = String.format(Locale.ROOT, "RESULT store=%s p50_before_ms=%.3f p99_before_ms=%.3f p50_during_ms=%.3f "
                        + "p99_during_ms=%.3f searches_before=%d searches_during=%d merge_s=%.1f move_s=%.1f hot_before_pct=%.1f "
                        + "hot_after_pct=%.1f output_cached_pct=%.1f moved_cached_pct=%.1f cgroup_peak_mb=%d hot_mb=%d merge_mb=%d "
                        + "move_mb=%d indexing_s=%.1f cgroup_rss_mb=%d",
                STORE, searcher.before.percentile(50), searcher.before.percentile(99), searcher.during.percentile(50),
                searcher.during.percentile(99), searcher.before.size, searcher.during.size, mergeMs / 1000.0, moveMs / 1000.0,
                hotBefore, hotAfter, percentCached(mergeDir, output), percentCached(moveTarget, files(moveTarget)),
                peak >> 20, hotBytes >> 20, mergeBytes >> 20, moveBytes >> 20, indexingMs / 1000.0, anonymous >> 20);
        System.out.println(result);
        assertNull("searches failed: " + searcher.failure, searcher.failure);
    }

    private void createIndex(String index, String node, int refresh) {
        assertAcked(prepareCreate(index).setSettings(Settings.builder().put("index.store.type", STORE)
                .put("index.number_of_shards", 1).put("index.number_of_replicas", 0)
                .put("index.refresh_interval", refresh).put("index.routing.allocation.require._name", node)
                // Segments stay as flushed until the force-merge.
                .put("index.merge.policy.segments_per_tier", 100).put("index.merge.policy.max_merge_at_once", 100))
                .setMapping("{\"properties\":{\"n\":{\"type\":\"integer\"},\"body\":{\"type\":\"text\"},"
                        + "\"blob\":{\"type\":\"keyword\",\"index\":false,\"doc_values\":false}}}"));
    }

    /** Documents of 100 words and a stored blob of random characters, in flushed batches: a segment each. */
    private void index(String index, int docs, int batches, long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        char[] alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".toCharArray();
        int perBatch = docs / batches;
        for (int batch = 0; batch < batches; batch++) {
            for (int from = 0; from < perBatch; from += 500) {
                BulkRequestBuilder bulk = client().prepareBulk();
                for (int i = from; i < Math.min(perBatch, from + 500); i++) {
                    StringBuilder body = new StringBuilder();
                    for (int w = 0; w < 100; w++) body.append('w').append(random.nextInt(VOCABULARY)).append(' ');
                    char[] blob = new char[SIZES[4]];
                    for (int c = 0; c < blob.length; c++) blob[c] = alphabet[random.nextInt(64)];
                    bulk.add(client().prepareIndex(index).setSource("n", batch * perBatch + i, "body", body.toString(), "blob", new String(blob)));
                }
                BulkResponse response = bulk.get();
                assertFalse(response.buildFailureMessage(), response.hasFailures());
            }
            client().admin().indices().prepareFlush(index).get();
        }
        client().admin().indices().prepareRefresh(index).get();
    }

    /** One thread searching the hot index: a term query, 5 documents fetched; latencies kept per phase. */
    private static final class Searcher extends Thread {
        final Client client;
        final Latencies before = new Latencies(), during = new Latencies();
        volatile int phase;
        volatile Throwable failure;

        Searcher(Client client) {
            super("hot-searcher");
            this.client = client;
        }

        @Override
        public void run() {
            SplittableRandom random = new SplittableRandom(7);
            try {
                while (phase < 3) {
                    int now = phase;
                    long start = System.nanoTime();
                    client.prepareSearch("hot").setQuery(QueryBuilders.termQuery("body", "w" + random.nextInt(VOCABULARY)))
                            .setSize(5).get();
                    long took = System.nanoTime() - start;
                    if (now == 1 && phase == 1) before.add(took);
                    if (now == 2 && phase == 2) during.add(took);
                }
            } catch (Throwable e) {
                failure = e;
            }
        }
    }

    private static final class Latencies {
        long[] nanos = new long[1 << 16];
        int size;

        void add(long took) {
            if (size == nanos.length) nanos = Arrays.copyOf(nanos, size * 2);
            nanos[size++] = took;
        }

        double percentile(int p) {
            if (size == 0) return Double.NaN;
            long[] sorted = Arrays.copyOf(nanos, size);
            Arrays.sort(sorted);
            return sorted[Math.min(size - 1, (int) Math.ceil(p / 100.0 * size) - 1)] / 1e6;
        }
    }

    private void resetPeak() throws IOException {
        if (CGROUP != null) Files.writeString(Path.of(CGROUP, "memory.max_usage_in_bytes"), "0");
    }

    private static long cgroupBytes(String file) throws IOException {
        return CGROUP == null ? -1 : Long.parseLong(Files.readString(Path.of(CGROUP, file)).trim());
    }

    /** {@return a line of the cgroup's memory.stat, -1 outside one} */
    private static long cgroupStat(String name) throws IOException {
        if (CGROUP == null) return -1;
        for (String line : Files.readAllLines(Path.of(CGROUP, "memory.stat"))) {
            if (line.startsWith(name + " ")) return Long.parseLong(line.substring(name.length() + 1).trim());
        }
        return -1;
    }

    private boolean placedOn(String index, String node) {
        ClusterState state = client().admin().cluster().prepareState().get().getState();
        for (ShardRouting copy : state.routingTable().allShards(index)) {
            if (!copy.started() || !state.nodes().get(copy.currentNodeId()).getName().equals(node)) return false;
        }
        return true;
    }

    private IndexShard shard(String node, String index) {
        return internalCluster().getInstance(IndicesService.class, node).indexServiceSafe(resolveIndex(index)).getShard(0);
    }

    private Path indexPath(String node, String index) {
        return shard(node, index).shardPath().resolveIndex();
    }

    private static Set<String> files(Path dir) throws IOException {
        Set<String> names = new HashSet<>();
        try (var list = Files.list(dir)) {
            list.filter(Files::isRegularFile).map(p -> p.getFileName().toString()).filter(n -> !n.equals("write.lock")).forEach(names::add);
        }
        return names;
    }

    private static long bytes(Path dir, Set<String> files) throws IOException {
        long total = 0;
        for (String file : files) total += Files.size(dir.resolve(file));
        return total;
    }

    private static double percentCached(Path dir, Set<String> files) throws IOException {
        long resident = 0, total = 0;
        for (String file : new ArrayList<>(files)) {
            Residency r;
            try {
                r = PageCache.residency(dir.resolve(file));
            } catch (java.nio.file.NoSuchFileException deletedMeanwhile) {
                continue;
            }
            resident += r.residentPages();
            total += r.totalPages();
        }
        return total == 0 ? 0 : 100.0 * resident / total;
    }
}

package io.pagewise.opensearch;

import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.greaterThanOrEqualTo;
import static org.hamcrest.Matchers.lessThanOrEqualTo;
import static org.opensearch.test.hamcrest.OpenSearchAssertions.assertAcked;
import static org.opensearch.test.hamcrest.OpenSearchAssertions.assertNoFailures;

import com.carrotsearch.randomizedtesting.RandomizedContext;
import io.pagewise.Native;
import io.pagewise.PageCache;
import io.pagewise.Residency;
import io.pagewise.lucene.PagewiseDirectory;
import org.apache.lucene.store.Directory;
import org.apache.lucene.store.FilterDirectory;
import org.apache.lucene.util.Version;
import org.opensearch.action.bulk.BulkRequestBuilder;
import org.opensearch.action.bulk.BulkResponse;
import org.opensearch.action.search.SearchResponse;
import org.opensearch.action.support.WriteRequest;
import org.opensearch.cluster.ClusterState;
import org.opensearch.cluster.routing.ShardRouting;
import org.opensearch.common.settings.Settings;
import org.opensearch.index.IndexService;
import org.opensearch.index.query.QueryBuilders;
import org.opensearch.index.shard.IndexShard;
import org.opensearch.indices.IndicesService;
import org.opensearch.plugins.Plugin;
import org.opensearch.search.SearchHit;
import org.opensearch.search.sort.SortOrder;
import org.opensearch.test.OpenSearchIntegTestCase;
import org.opensearch.test.OpenSearchIntegTestCase.ClusterScope;
import org.opensearch.test.OpenSearchIntegTestCase.Scope;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * A pagewise index through a shard's life in a cluster of three data nodes, beside the same documents on the default
 * store: indexing into several segments, searching, force-merging, moving a shard, snapshot and restore. Results must
 * be equal; what each step leaves in the page cache is measured on the node that did it, from inside the JVM (the
 * nodes' system-call filter forbids starting vmtouch).
 */
// A cluster per test: the page-cache measurements of one test must not depend on what the tests before it did on the
// same nodes.
@ClusterScope(scope = Scope.TEST, numDataNodes = 3, numClientNodes = 0, supportsDedicatedMasters = false)
public class PagewiseStoreIT extends OpenSearchIntegTestCase {
    private static final int DOCS = 20_000;
    private static final int BATCHES = 10;
    private static final String[] QUERIES = {"w7", "w42", "w137", "w311", "w499"};

    @org.junit.BeforeClass
    public static void announce() {
        System.out.println(PagewiseStoreIT.class.getSimpleName() + ": -Dtests.seed=" + RandomizedContext.current().getRunnerSeedAsString()
                + ", OpenSearch on Lucene " + Version.LATEST + ", Java " + Runtime.version() + ", pagewise native: "
                + (Native.isAvailable() ? Native.binding() : "none (" + Native.loadError().getMessage() + ")"));
    }

    @Override
    protected Collection<Class<? extends Plugin>> nodePlugins() {
        return List.of(PagewisePlugin.class);
    }

    /**
     * The life cycle with equal results throughout, a hot index that stays cached on every node, and what the
     * force-merge of a cold index, a shard's move and a restore leave in the page cache measured and printed.
     */
    public void testShardLifeCycle() throws Exception {
        lifeCycle(false, false);
    }

    /**
     * The same, holding a moved shard's target copy and the restored copies (written by recovery, opened while
     * recovering, the primaries then read whole as the source of their replicas) to at most 1 % cached, with a full
     * CheckIndex of every copy as it starts.
     */
    public void testRecoveredCopiesLeaveThePageCache() throws Exception {
        lifeCycle(false, true);
    }

    /**
     * The same, with merge outputs that do not follow their neighbours, holding the force-merge output to at most
     * 1 % cached: the MERGE write policy holds though the merge reads its sources through the near-real-time
     * readers' mappings. (With the defaults a merge output is kept when its sources were at least half cached as it
     * began, and in indexes this small, an open reader's read-around and fault-around keep most of each source cached.)
     */
    public void testMergeOutputLeavesThePageCache() throws Exception {
        lifeCycle(true, false);
    }

    /**
     * Closing an index drops its copies' pages on every node, where OpenSearch's own store leaves them cached; opened
     * again it serves the same documents; deleted, its files are gone, and their pages with them.
     */
    public void testClosingAnIndexDropsItsPages() throws Exception {
        for (String index : List.of("pw", "plain")) {
            assertAcked(prepareCreate(index).setSettings(Settings.builder()
                    .put("index.store.type", index.equals("pw") ? "pagewise" : "fs")
                    .put("index.number_of_shards", 2).put("index.number_of_replicas", 1)));
        }
        ensureGreen("pw", "plain");
        long seed = random().nextLong();
        indexDocuments("pw", 4_000, 2, seed);
        indexDocuments("plain", 4_000, 2, seed);
        Map<String, Path> copies = new TreeMap<>();
        for (String index : List.of("pw", "plain")) {
            for (var node : shardFilesPerNode(index).entrySet()) {
                for (var shard : node.getValue().entrySet()) {
                    Path dir = shardIndexPath(node.getKey(), index, shard.getKey());
                    for (String file : shard.getValue()) PageCache.touch(dir.resolve(file));
                    copies.put(index + "[" + shard.getKey() + "] on " + node.getKey(), dir);
                }
            }
        }
        assertEquals("copies", 8, copies.size());

        assertAcked(client().admin().indices().prepareClose("pw", "plain"));
        assertBusy(() -> {
            for (var copy : copies.entrySet()) {
                double percent = percentCached(copy.getValue(), listFiles(copy.getValue()));
                System.out.printf("%s, closed: %.2f %% cached%n", copy.getKey(), percent);
                if (copy.getKey().startsWith("pw[")) {
                    assertThat(copy.getKey() + " closed, % cached", percent, lessThanOrEqualTo(1.0));
                } else {
                    assertThat(copy.getKey() + " closed (OpenSearch's fs store), % cached", percent, greaterThanOrEqualTo(95.0));
                }
            }
        });

        assertAcked(client().admin().indices().prepareOpen("pw", "plain"));
        ensureGreen("pw", "plain");
        for (String index : List.of("pw", "plain")) {
            assertEquals("documents in " + index + " opened again", 4_000, client().prepareSearch(index).setSize(0)
                    .setTrackTotalHits(true).get().getHits().getTotalHits().value());
        }
        for (String word : QUERIES) assertEquals(word, ids(search("plain", word)), ids(search("pw", word)));

        assertAcked(client().admin().indices().prepareDelete("pw"));
        assertBusy(() -> {
            for (var copy : copies.entrySet()) {
                if (copy.getKey().startsWith("pw[")) assertFalse(copy.getKey() + " deleted", Files.exists(copy.getValue()));
            }
        });
    }

    /** A setting of the policy table that names no cache mode is refused, naming the setting and the modes. */
    public void testBadSetting() {
        IllegalArgumentException e = expectThrows(IllegalArgumentException.class, () -> prepareCreate("bad")
                .setSettings(Settings.builder().put("index.store.type", "pagewise").put("index.store.pagewise.merge.mode", "evicted"))
                .get());
        assertThat(e.getMessage() + (e.getCause() == null ? "" : " / " + e.getCause().getMessage()),
                org.hamcrest.Matchers.containsString("[index.store.pagewise.merge.mode] is 'evicted': expected one of [writeback,"));
    }

    /**
     * _pagewise/stats: every shard copy of a pagewise index, on every node, with what it wrote by context and what
     * the page cache holds of each file type, equal to what the library's residency API finds in its files.
     */
    public void testStats() throws Exception {
        assertAcked(prepareCreate("pw").setSettings(Settings.builder().put("index.store.type", "pagewise")
                .put("index.number_of_shards", 2).put("index.number_of_replicas", 1).put("index.refresh_interval", -1)));
        assertAcked(prepareCreate("plain").setSettings(Settings.builder().put("index.store.type", "fs")
                .put("index.number_of_shards", 1).put("index.number_of_replicas", 0)));
        ensureGreen("pw", "plain");
        indexDocuments("pw", 2_000, 4, random().nextLong());
        indexDocuments("plain", 100, 1, random().nextLong());
        assertNoFailures(client().admin().indices().prepareForceMerge("pw").setMaxNumSegments(1).get());

        // One copy read wholly into the page cache; every copy's stats must equal what the library's residency API
        // finds in its files, measured right after (retried while the shards settle after the merge).
        Map<String, Map<Integer, Set<String>>> files = shardFilesPerNode("pw");
        String cachedNode = files.keySet().iterator().next();
        int cachedShard = files.get(cachedNode).keySet().iterator().next();
        Path cachedDir = shardIndexPath(cachedNode, "pw", cachedShard);
        assertBusy(() -> {
            for (String file : listFiles(cachedDir)) PageCache.touch(cachedDir.resolve(file));
            PagewiseStatsAction.Response response = client().execute(PagewiseStatsAction.INSTANCE,
                    new PagewiseStatsAction.Request(new String[0])).get();
            assertFalse(String.valueOf(response.failures()), response.hasFailures());
            assertEquals("nodes answering", 3, response.getNodes().size());
            int copies = 0;
            for (PagewiseStatsAction.NodeResponse node : response.getNodes()) {
                assertTrue(node.getNode().getName() + " loaded the native library", node.nativeLoaded());
                for (PagewiseShardStats shard : node.shards()) {
                    assertEquals("only pagewise indexes are reported", "pw", shard.index());
                    copies++;
                    assertTrue(shard.residencyMeasured());
                    Path dir = shardIndexPath(node.getNode().getName(), "pw", shard.shard());
                    boolean touched = node.getNode().getName().equals(cachedNode) && shard.shard() == cachedShard;
                    Map<String, Long> measured = new TreeMap<>();
                    for (String file : listFiles(dir)) {
                        long bytes = Files.size(dir.resolve(file));
                        String type = file.contains(".") ? file.substring(file.indexOf('.') + 1) : "";
                        measured.merge(type, Math.min(bytes, PageCache.residency(dir.resolve(file)).residentBytes()), Long::sum);
                    }
                    long size = 0;
                    for (var type : shard.cached()) {
                        String what = type.fileType() + " of pw[" + shard.shard() + "] on " + node.getNode().getName();
                        assertEquals(what, measured.getOrDefault(type.fileType(), 0L).longValue(), type.cachedBytes());
                        if (touched) assertEquals(what + " (read wholly)", type.bytes(), type.cachedBytes());
                        size += type.bytes();
                    }
                    long onDisk = 0;
                    for (String file : listFiles(dir)) onDisk += Files.size(dir.resolve(file));
                    assertEquals("bytes of pw[" + shard.shard() + "] on " + node.getNode().getName(), onDisk, size);
                    assertTrue("flushes written: " + shard.io(), shard.io().stream()
                            .anyMatch(each -> each.kind() == io.pagewise.lucene.ContextKind.FLUSH && each.bytesWritten() > 0));
                }
            }
            assertEquals("shard copies of pw", 4, copies);
        }, 30, java.util.concurrent.TimeUnit.SECONDS);

        // The REST handler: GET _pagewise/stats/pw, answered as JSON by every node.
        var request = new org.opensearch.test.rest.FakeRestRequest.Builder(xContentRegistry())
                .withMethod(org.opensearch.rest.RestRequest.Method.GET).withPath("/_pagewise/stats/pw")
                .withParams(new HashMap<>(Map.of("index", "pw"))).build();
        var channel = new org.opensearch.test.rest.FakeRestChannel(request, false, 1);
        new RestPagewiseStatsAction().handleRequest(request, channel,
                internalCluster().getInstance(org.opensearch.transport.client.node.NodeClient.class));
        assertBusy(() -> assertEquals(1, channel.responses().get() + channel.errors().get()));
        assertEquals(0, channel.errors().get());
        String json = channel.capturedResponse().content().utf8ToString();
        System.out.println("GET _pagewise/stats/pw: " + json.substring(0, Math.min(json.length(), 600)) + "...");
        assertEquals(org.opensearch.core.rest.RestStatus.OK, channel.capturedResponse().status());
        Map<String, Object> parsed = org.opensearch.common.xcontent.XContentHelper.convertToMap(
                org.opensearch.common.xcontent.json.JsonXContent.jsonXContent, json, false);
        @SuppressWarnings("unchecked")
        Map<String, Object> nodes = (Map<String, Object>) parsed.get("nodes");
        assertEquals(3, nodes.size());
        int restCopies = 0;
        for (Object node : nodes.values()) {
            @SuppressWarnings("unchecked")
            Map<String, Object> indices = (Map<String, Object>) ((Map<String, Object>) node).get("indices");
            assertFalse("plain is not pagewise's", indices.containsKey("plain"));
            if (indices.containsKey("pw")) {
                @SuppressWarnings("unchecked")
                List<Object> shards = (List<Object>) ((Map<String, Object>) indices.get("pw")).get("shards");
                restCopies += shards.size();
            }
        }
        assertEquals(4, restCopies);
    }

    private void lifeCycle(boolean strictMerge, boolean strictRecovery) throws Exception {
        assertTrue("the native library must load in the test cluster's JVM: " + Native.loadError(), Native.isAvailable());

        // One shard of a hot index on each node, searched throughout: other indexes' steps must leave it cached.
        assertAcked(prepareCreate("hot").setSettings(Settings.builder().put("index.store.type", "pagewise")
                .put("index.number_of_shards", 3).put("index.number_of_replicas", 0)
                .put("index.routing.allocation.total_shards_per_node", 1)));
        for (String index : List.of("pw", "plain")) {
            assertAcked(prepareCreate(index).setSettings(Settings.builder()
                    .put("index.store.type", index.equals("pw") ? "pagewise" : "fs")
                    .put("index.number_of_shards", 2).put("index.number_of_replicas", 1)
                    .put("index.refresh_interval", -1)
                    .put(strictMerge && index.equals("pw") ? Settings.builder()
                            .put("index.store.pagewise.merge.follow_neighbours", false).build() : Settings.EMPTY)
                    // The hardest of the test framework's random choices, always: a full CheckIndex when a copy
                    // starts reads every byte of its files through mapped inputs.
                    .put(strictRecovery ? Settings.builder().put("index.shard.check_on_startup", true).build()
                            : Settings.EMPTY)));
        }
        ensureGreen("hot", "pw", "plain");
        long seed = random().nextLong();
        indexDocuments("hot", 3_000, 1, seed);
        indexDocuments("pw", DOCS, BATCHES, seed);
        indexDocuments("plain", DOCS, BATCHES, seed);
        warmHot();

        assertThat("segments of pw", segmentCount("pw"), greaterThan(4 * 2));
        assertSameResults("pw", "plain");

        reportCached("pw", "after indexing");
        // Force-merge a cold index, as after a node's restart or a long idle time: fadvise leaves what an open
        // reader has mapped, so pw stays partly cached, and in an index this small, mostly.
        Map<String, Map<Integer, Set<String>>> before = shardFilesPerNode("pw");
        evict("pw");
        // Without the flush where the output is held to 1 %: the flush's refresh opens the merged segment.
        assertNoFailures(client().admin().indices().prepareForceMerge("pw", "plain").setMaxNumSegments(1)
                .setFlush(!strictMerge).get());
        // Measured before a reader opens the merged segment: its first reads, not the merge, decide what is cached
        // then (with this disk's 8 MiB read-around, a file of a few MB is wholly read at its first page fault).
        for (var node : shardFilesPerNode("pw").entrySet()) {
            for (var shard : node.getValue().entrySet()) {
                Set<String> made = new HashSet<>(shard.getValue());
                made.removeAll(before.get(node.getKey()).getOrDefault(shard.getKey(), Set.of()));
                cachedAtMost("merge output of pw[" + shard.getKey() + "] on " + node.getKey(),
                        shardIndexPath(node.getKey(), "pw", shard.getKey()), made, strictMerge);
            }
        }
        if (strictMerge) flushAndRefresh("pw", "plain"); else refresh("pw", "plain");
        assertEquals("segments of pw after the force-merge", 2 * 2, segmentCount("pw"));
        assertSameResults("pw", "plain");
        assertHotCached();

        // Move every copy of pw off one node: peer recovery reads the source once and writes the target.
        Map<Integer, Set<String>> placed = placement("pw");
        String leaving = placed.get(0).iterator().next();
        assertAcked(client().admin().indices().prepareUpdateSettings("pw")
                .setSettings(Settings.builder().put("index.routing.allocation.exclude._name", leaving)));
        assertFalse(client().admin().cluster().prepareHealth("pw").setWaitForGreenStatus().setWaitForNoRelocatingShards(true)
                .setWaitForEvents(org.opensearch.common.Priority.LANGUID).get().isTimedOut());
        Map<Integer, Set<String>> moved = placement("pw");
        int targets = 0;
        for (var shard : moved.entrySet()) {
            for (String node : shard.getValue()) {
                if (placed.get(shard.getKey()).contains(node)) continue;
                targets++;
                Path dir = shardIndexPath(node, "pw", shard.getKey());
                cachedAtMost("target copy of pw[" + shard.getKey() + "] on " + node, dir, listFiles(dir), strictRecovery);
                System.out.println("target copy of pw[" + shard.getKey() + "] on " + node + " wrote and read " + writtenByContext(node, "pw", shard.getKey()));
            }
        }
        assertTrue("no copy of pw moved off " + leaving, targets > 0);
        assertSameResults("pw", "plain");
        assertHotCached();

        // Snapshot to an fs repository and restore into a new index.
        assertAcked(client().admin().cluster().preparePutRepository("repo").setType("fs")
                .setSettings(Settings.builder().put("location", randomRepoPath())));
        assertEquals(org.opensearch.snapshots.SnapshotState.SUCCESS, client().admin().cluster()
                .prepareCreateSnapshot("repo", "snap").setIndices("pw").setWaitForCompletion(true).get()
                .getSnapshotInfo().state());
        assertEquals(0, client().admin().cluster().prepareRestoreSnapshot("repo", "snap").setIndices("pw")
                .setRenamePattern("pw").setRenameReplacement("pw_restored").setWaitForCompletion(true).get()
                .getRestoreInfo().failedShards());
        ensureGreen("pw_restored");
        reportCached("pw_restored", "after the restore");
        // Measured before any search, as after the move.
        for (var node : shardFilesPerNode("pw_restored").entrySet()) {
            for (var shard : node.getValue().entrySet()) {
                cachedAtMost("restored copy of pw[" + shard.getKey() + "] on " + node.getKey(),
                        shardIndexPath(node.getKey(), "pw_restored", shard.getKey()), shard.getValue(), strictRecovery);
            }
        }
        assertSameResults("pw_restored", "plain");
        assertHotCached();
    }

    /** {@return the bytes a shard copy's directory wrote and read, per I/O context} */
    private String writtenByContext(String node, String index, int shard) {
        PagewiseDirectory directory = (PagewiseDirectory) FilterDirectory.unwrap(internalCluster().getInstance(IndicesService.class, node)
                .indexServiceSafe(resolveIndex(index)).getShard(shard).store().directory());
        Map<String, Long> written = new TreeMap<>();
        for (var io : directory.ioByFileType()) {
            if (io.bytesWritten() > 0) written.merge(io.kind().toString(), io.bytesWritten(), Long::sum);
            if (io.bytesRead() > 0) written.merge("read " + io.kind(), io.bytesRead(), Long::sum);
        }
        return written.toString();
    }

    private void indexDocuments(String index, int docs, int batches, long seed) {
        Random random = new Random(seed);
        int perBatch = docs / batches;
        for (int batch = 0; batch < batches; batch++) {
            BulkRequestBuilder bulk = client().prepareBulk().setRefreshPolicy(WriteRequest.RefreshPolicy.IMMEDIATE);
            for (int i = 0; i < perBatch; i++) {
                int n = batch * perBatch + i;
                StringBuilder body = new StringBuilder();
                for (int w = 0; w < 150; w++) body.append('w').append(random.nextInt(500)).append(' ');
                bulk.add(client().prepareIndex(index).setId(Integer.toString(n)).setSource("n", n, "body", body.toString()));
            }
            BulkResponse response = bulk.get();
            assertFalse(response.buildFailureMessage(), response.hasFailures());
            // A flush per batch: each batch becomes a segment of its own on disk.
            client().admin().indices().prepareFlush(index).get();
        }
    }

    private void assertSameResults(String index, String reference) {
        assertEquals("documents in " + index, DOCS, client().prepareSearch(index).setSize(0).setTrackTotalHits(true)
                .get().getHits().getTotalHits().value());
        for (String word : QUERIES) {
            SearchResponse ours = search(index, word);
            SearchResponse theirs = search(reference, word);
            assertEquals(word + " in " + index, theirs.getHits().getTotalHits().value(), ours.getHits().getTotalHits().value());
            assertEquals(word + " in " + index, ids(theirs), ids(ours));
        }
    }

    private static SearchResponse search(String index, String word) {
        return client().prepareSearch(index).setQuery(QueryBuilders.matchQuery("body", word)).addSort("n", SortOrder.ASC)
                .setSize(50).setTrackTotalHits(true).get();
    }

    private static List<String> ids(SearchResponse response) {
        List<String> ids = new ArrayList<>();
        for (SearchHit hit : response.getHits()) ids.add(hit.getId());
        return ids;
    }

    private int segmentCount(String index) {
        return client().admin().indices().prepareSegments(index).get().getIndices().get(index).getShards().values()
                .stream().flatMap(s -> Stream.of(s.getShards())).mapToInt(s -> s.getSegments().size()).sum();
    }

    /** Searches the hot index and reads its files in, as a node serving it would have them. */
    private void warmHot() throws IOException {
        for (String word : QUERIES) client().prepareSearch("hot").setQuery(QueryBuilders.matchQuery("body", word)).get();
        for (var node : shardFilesPerNode("hot").entrySet()) {
            for (var shard : node.getValue().entrySet()) {
                Path dir = shardIndexPath(node.getKey(), "hot", shard.getKey());
                for (String file : shard.getValue()) PageCache.touch(dir.resolve(file));
            }
        }
    }

    private void assertHotCached() throws IOException {
        for (var node : shardFilesPerNode("hot").entrySet()) {
            for (var shard : node.getValue().entrySet()) {
                Path dir = shardIndexPath(node.getKey(), "hot", shard.getKey());
                double percent = percentCached(dir, shard.getValue());
                System.out.printf("hot[%d] on %s: %.1f %% cached%n", shard.getKey(), node.getKey(), percent);
                assertThat("hot[" + shard.getKey() + "] on " + node.getKey() + " % cached", percent, greaterThanOrEqualTo(95.0));
            }
        }
    }

    private void reportCached(String index, String when) throws IOException {
        for (var node : shardFilesPerNode(index).entrySet()) {
            for (var shard : node.getValue().entrySet()) {
                Path dir = shardIndexPath(node.getKey(), index, shard.getKey());
                boolean primary = internalCluster().getInstance(IndicesService.class, node.getKey()).indexServiceSafe(resolveIndex(index))
                        .getShard(shard.getKey()).routingEntry().primary();
                System.out.printf("%s[%d] (%s) on %s %s: %.2f %% cached; wrote and read %s%n", index, shard.getKey(),
                        primary ? "primary" : "replica", node.getKey(), when, percentCached(dir, shard.getValue()),
                        writtenByContext(node.getKey(), index, shard.getKey()));
            }
        }
    }

    /** Prints what the page cache holds of files, and with strict, fails above 1 %. */
    private static void cachedAtMost(String what, Path dir, Set<String> files, boolean strict) throws IOException {
        double atMost = 1.0;
        assertFalse(what + ": no files", files.isEmpty());
        StringBuilder perFile = new StringBuilder();
        for (String file : new java.util.TreeSet<>(files)) {
            Residency r = PageCache.residency(dir.resolve(file));
            if (r.residentPages() > 0) perFile.append(String.format(" %s %d/%d", file, r.residentPages(), r.totalPages()));
        }
        double percent = percentCached(dir, files);
        System.out.printf("%s: %.2f %% cached;%s%n", what, percent, perFile);
        if (strict) assertThat(what + " % cached (files with cached pages:" + perFile + ")", percent, lessThanOrEqualTo(atMost));
    }

    private static double percentCached(Path dir, Set<String> files) throws IOException {
        long resident = 0, total = 0;
        for (String file : files) {
            Residency r = PageCache.residency(dir.resolve(file));
            resident += r.residentPages();
            total += r.totalPages();
        }
        return total == 0 ? 0 : 100.0 * resident / total;
    }

    private void evict(String index) throws IOException {
        for (var node : shardFilesPerNode(index).entrySet()) {
            for (var shard : node.getValue().entrySet()) {
                Path dir = shardIndexPath(node.getKey(), index, shard.getKey());
                for (String file : shard.getValue()) PageCache.evict(dir.resolve(file));
            }
        }
    }

    /** {@return per node name, per shard number, the names of the files of that shard copy's Lucene index} */
    private Map<String, Map<Integer, Set<String>>> shardFilesPerNode(String index) throws IOException {
        Map<String, Map<Integer, Set<String>>> files = new TreeMap<>();
        for (var shard : placement(index).entrySet()) {
            for (String node : shard.getValue()) {
                files.computeIfAbsent(node, n -> new TreeMap<>()).put(shard.getKey(),
                        listFiles(shardIndexPath(node, index, shard.getKey())));
            }
        }
        return files;
    }

    /** {@return the regular files of a shard's index folder but the write lock} */
    private static Set<String> listFiles(Path dir) throws IOException {
        Set<String> names = new HashSet<>();
        try (Stream<Path> list = Files.list(dir)) {
            list.filter(Files::isRegularFile).map(p -> p.getFileName().toString())
                    .filter(name -> !name.equals("write.lock")).forEach(names::add);
        }
        return names;
    }

    /** {@return per shard number, the names of the nodes that hold a started copy} */
    private Map<Integer, Set<String>> placement(String index) {
        ClusterState state = client().admin().cluster().prepareState().get().getState();
        Map<Integer, Set<String>> placed = new TreeMap<>();
        for (ShardRouting copy : state.routingTable().allShards(index)) {
            if (!copy.started()) continue;
            placed.computeIfAbsent(copy.id(), id -> new HashSet<>()).add(state.nodes().get(copy.currentNodeId()).getName());
        }
        return placed;
    }

    /** {@return the folder of a shard copy's Lucene index on a node, checked to be a PagewiseDirectory's or not} */
    private Path shardIndexPath(String node, String index, int shard) {
        IndexService service = internalCluster().getInstance(IndicesService.class, node).indexServiceSafe(resolveIndex(index));
        IndexShard copy = service.getShard(shard);
        Directory directory = FilterDirectory.unwrap(copy.store().directory());
        if (!index.equals("plain")) {
            assertTrue(index + " opened " + directory, directory instanceof PagewiseDirectory);
        }
        return copy.shardPath().resolveIndex();
    }
}

package io.pagewise.opensearch;

import io.pagewise.Native;
import io.pagewise.PageCache;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.opensearch.core.index.Index;
import org.opensearch.index.IndexService;
import org.opensearch.index.IndexSettings;
import org.opensearch.index.shard.IndexEventListener;
import org.opensearch.index.shard.IndexShard;
import org.opensearch.indices.cluster.IndicesClusterStateService.AllocatedIndices.IndexRemovalReason;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Stream;

/**
 * Drops a closed index's files from the page cache on the node. A closed index serves nothing until it is opened
 * again, yet OpenSearch leaves every page its searches cached where it was, for other indexes to push out. Only on
 * close: a node that shuts down, or a shard that moves away, leaves its files alone (a restart reads them again, and
 * a moved copy's files are deleted, which frees their pages).
 */
final class ClosedIndexEviction implements IndexEventListener {
    private static final Logger LOG = LogManager.getLogger(ClosedIndexEviction.class);
    /** The Lucene folders of the shard copies of an index being closed, noted before its shards close. */
    private final Map<Index, List<Path>> closing = new ConcurrentHashMap<>();

    @Override
    public void beforeIndexRemoved(IndexService index, IndexRemovalReason reason) {
        if (reason != IndexRemovalReason.CLOSED || !Native.isAvailable()) return;
        List<Path> folders = new ArrayList<>();
        for (IndexShard shard : index) folders.add(shard.shardPath().resolveIndex());
        closing.put(index.index(), folders);
    }

    /** Once the shards are closed, their readers' mappings are gone and fadvise can drop every page. */
    @Override
    public void afterIndexRemoved(Index index, IndexSettings settings, IndexRemovalReason reason) {
        List<Path> folders = closing.remove(index);
        if (folders == null) return;
        long files = 0;
        for (Path folder : folders) {
            try (Stream<Path> list = Files.list(folder)) {
                for (Path file : (Iterable<Path>) list::iterator) {
                    if (!Files.isRegularFile(file) || file.getFileName().toString().equals("write.lock")) continue;
                    try {
                        PageCache.evict(file);
                        files++;
                    } catch (NoSuchFileException deletedMeanwhile) {
                        // nothing left to drop
                    }
                }
            } catch (IOException | RuntimeException e) {
                LOG.warn("pagewise: could not drop the page cache of closed index {} in {}: {}", index, folder, e.toString());
            }
        }
        LOG.debug("pagewise: closed index {}: dropped {} files of {} shard copies from the page cache", index, files, folders.size());
    }
}

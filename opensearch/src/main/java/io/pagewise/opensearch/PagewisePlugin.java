package io.pagewise.opensearch;

import io.pagewise.Native;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.opensearch.common.settings.Setting;
import org.opensearch.plugins.IndexStorePlugin;
import org.opensearch.plugins.Plugin;

import java.util.List;
import java.util.Map;

/** The OpenSearch plugin: the index store {@code pagewise}, its index settings, and its statistics. */
public class PagewisePlugin extends Plugin implements IndexStorePlugin {
    private static final Logger LOG = LogManager.getLogger(PagewisePlugin.class);

    /** Says once, at the node's start, whether pagewise runs with its native calls or on the pure-Java path. */
    public PagewisePlugin() {
        if (Native.isAvailable()) {
            LOG.info("pagewise: native calls loaded ({}, {}): index.store.type pagewise controls the page cache",
                    Native.binding(), Native.platform());
        } else {
            LOG.warn("pagewise: native calls not available, index.store.type pagewise runs on the pure-Java path"
                    + " (every cache mode reads and writes through the page cache, and no residency is reported): {}",
                    String.valueOf(Native.loadError()));
        }
    }

    @Override
    public Map<String, DirectoryFactory> getDirectoryFactories() {
        return Map.of(PagewiseDirectoryFactory.STORE_TYPE, new PagewiseDirectoryFactory());
    }

    @Override
    public List<Setting<?>> getSettings() {
        return PagewiseIndexSettings.all();
    }
}

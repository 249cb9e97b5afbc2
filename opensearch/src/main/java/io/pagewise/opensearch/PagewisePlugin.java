package io.pagewise.opensearch;

import io.pagewise.Native;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.opensearch.action.ActionRequest;
import org.opensearch.cluster.metadata.IndexNameExpressionResolver;
import org.opensearch.cluster.node.DiscoveryNodes;
import org.opensearch.common.settings.ClusterSettings;
import org.opensearch.common.settings.IndexScopedSettings;
import org.opensearch.common.settings.Setting;
import org.opensearch.common.settings.Settings;
import org.opensearch.common.settings.SettingsFilter;
import org.opensearch.core.action.ActionResponse;
import org.opensearch.index.IndexModule;
import org.opensearch.plugins.ActionPlugin;
import org.opensearch.plugins.IndexStorePlugin;
import org.opensearch.plugins.Plugin;
import org.opensearch.rest.RestController;
import org.opensearch.rest.RestHandler;

import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The OpenSearch plugin: the index store {@code pagewise}, its index settings, and its statistics
 * ({@code GET _pagewise/stats}).
 */
public class PagewisePlugin extends Plugin implements IndexStorePlugin, ActionPlugin {
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
    public void onIndexModule(IndexModule indexModule) {
        if (PagewiseDirectoryFactory.STORE_TYPE.equals(indexModule.getSettings().get(IndexModule.INDEX_STORE_TYPE_SETTING.getKey()))) {
            indexModule.addIndexEventListener(new RecoveringDirectory.StateListener());
            indexModule.addIndexEventListener(new ClosedIndexEviction());
        }
    }

    @Override
    public List<Setting<?>> getSettings() {
        return PagewiseIndexSettings.all();
    }

    @Override
    public List<ActionHandler<? extends ActionRequest, ? extends ActionResponse>> getActions() {
        return List.of(new ActionHandler<>(PagewiseStatsAction.INSTANCE, PagewiseStatsAction.TransportAction.class));
    }

    @Override
    public List<RestHandler> getRestHandlers(Settings settings, RestController restController, ClusterSettings clusterSettings,
                                             IndexScopedSettings indexScopedSettings, SettingsFilter settingsFilter,
                                             IndexNameExpressionResolver indexNameExpressionResolver,
                                             Supplier<DiscoveryNodes> nodesInCluster) {
        return List.of(new RestPagewiseStatsAction());
    }
}

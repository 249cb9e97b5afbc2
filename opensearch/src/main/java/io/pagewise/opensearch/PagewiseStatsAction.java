package io.pagewise.opensearch;

import io.pagewise.Native;
import io.pagewise.lucene.FileTypeCache;
import io.pagewise.lucene.PagewiseDirectory;
import org.apache.lucene.store.Directory;
import org.apache.lucene.store.FilterDirectory;
import org.opensearch.action.ActionType;
import org.opensearch.action.FailedNodeException;
import org.opensearch.action.support.ActionFilters;
import org.opensearch.action.support.nodes.BaseNodeResponse;
import org.opensearch.action.support.nodes.BaseNodesRequest;
import org.opensearch.action.support.nodes.BaseNodesResponse;
import org.opensearch.action.support.nodes.TransportNodesAction;
import org.opensearch.cluster.ClusterName;
import org.opensearch.cluster.node.DiscoveryNode;
import org.opensearch.cluster.service.ClusterService;
import org.opensearch.common.inject.Inject;
import org.opensearch.common.regex.Regex;
import org.opensearch.core.common.io.stream.StreamInput;
import org.opensearch.core.common.io.stream.StreamOutput;
import org.opensearch.core.xcontent.ToXContentFragment;
import org.opensearch.core.xcontent.XContentBuilder;
import org.opensearch.index.IndexService;
import org.opensearch.index.shard.IndexShard;
import org.opensearch.indices.IndicesService;
import org.opensearch.threadpool.ThreadPool;
import org.opensearch.transport.TransportRequest;
import org.opensearch.transport.TransportService;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * {@code cluster:monitor/pagewise/stats}: from each node, the statistics of every shard copy it holds on the pagewise
 * store ({@link PagewiseShardStats}), for all indexes or those whose names match the request's patterns.
 */
public final class PagewiseStatsAction extends ActionType<PagewiseStatsAction.Response> {
    public static final String NAME = "cluster:monitor/pagewise/stats";
    public static final PagewiseStatsAction INSTANCE = new PagewiseStatsAction();

    private PagewiseStatsAction() {
        super(NAME, Response::new);
    }

    /** Which nodes (all by default) and which indexes (all when none is named; wildcards allowed). */
    public static final class Request extends BaseNodesRequest<Request> {
        private final String[] indices;

        public Request(String[] indices, String... nodeIds) {
            super(nodeIds);
            this.indices = indices;
        }

        public Request(StreamInput in) throws IOException {
            super(in);
            indices = in.readStringArray();
        }

        public String[] indices() {
            return indices;
        }

        @Override
        public void writeTo(StreamOutput out) throws IOException {
            super.writeTo(out);
            out.writeStringArray(indices);
        }
    }

    /** The request as each node receives it. */
    public static final class NodeRequest extends TransportRequest {
        private final String[] indices;

        NodeRequest(String[] indices) {
            this.indices = indices;
        }

        public NodeRequest(StreamInput in) throws IOException {
            super(in);
            indices = in.readStringArray();
        }

        @Override
        public void writeTo(StreamOutput out) throws IOException {
            super.writeTo(out);
            out.writeStringArray(indices);
        }
    }

    /** One node's answer. */
    public static final class NodeResponse extends BaseNodeResponse implements ToXContentFragment {
        private final boolean nativeLoaded;
        private final List<PagewiseShardStats> shards;

        NodeResponse(DiscoveryNode node, boolean nativeLoaded, List<PagewiseShardStats> shards) {
            super(node);
            this.nativeLoaded = nativeLoaded;
            this.shards = shards;
        }

        public NodeResponse(StreamInput in) throws IOException {
            super(in);
            nativeLoaded = in.readBoolean();
            shards = in.readList(PagewiseShardStats::readFrom);
        }

        public boolean nativeLoaded() {
            return nativeLoaded;
        }

        public List<PagewiseShardStats> shards() {
            return shards;
        }

        @Override
        public void writeTo(StreamOutput out) throws IOException {
            super.writeTo(out);
            out.writeBoolean(nativeLoaded);
            out.writeList(shards);
        }

        @Override
        public XContentBuilder toXContent(XContentBuilder builder, Params params) throws IOException {
            builder.startObject(getNode().getId());
            builder.field("name", getNode().getName());
            builder.field("native", nativeLoaded);
            Map<String, List<PagewiseShardStats>> byIndex = new TreeMap<>();
            for (PagewiseShardStats shard : shards) byIndex.computeIfAbsent(shard.index(), i -> new ArrayList<>()).add(shard);
            builder.startObject("indices");
            for (var index : byIndex.entrySet()) {
                builder.startObject(index.getKey());
                builder.startArray("shards");
                for (PagewiseShardStats shard : index.getValue()) shard.toXContent(builder, params);
                builder.endArray();
                builder.endObject();
            }
            builder.endObject();
            return builder.endObject();
        }
    }

    /** Every node's answer. */
    public static final class Response extends BaseNodesResponse<NodeResponse> implements ToXContentFragment {
        Response(ClusterName clusterName, List<NodeResponse> nodes, List<FailedNodeException> failures) {
            super(clusterName, nodes, failures);
        }

        public Response(StreamInput in) throws IOException {
            super(in);
        }

        @Override
        protected List<NodeResponse> readNodesFrom(StreamInput in) throws IOException {
            return in.readList(NodeResponse::new);
        }

        @Override
        protected void writeNodesTo(StreamOutput out, List<NodeResponse> nodes) throws IOException {
            out.writeList(nodes);
        }

        @Override
        public XContentBuilder toXContent(XContentBuilder builder, Params params) throws IOException {
            builder.startObject("nodes");
            for (NodeResponse node : getNodes()) node.toXContent(builder, params);
            return builder.endObject();
        }
    }

    /** Collects each node's statistics from the shards its IndicesService holds. */
    public static final class TransportAction extends TransportNodesAction<Request, Response, NodeRequest, NodeResponse> {
        private final IndicesService indicesService;

        @Inject
        public TransportAction(ThreadPool threadPool, ClusterService clusterService, TransportService transportService,
                               ActionFilters actionFilters, IndicesService indicesService) {
            super(NAME, threadPool, clusterService, transportService, actionFilters, Request::new, NodeRequest::new,
                    ThreadPool.Names.MANAGEMENT, NodeResponse.class);
            this.indicesService = indicesService;
        }

        @Override
        protected Response newResponse(Request request, List<NodeResponse> responses, List<FailedNodeException> failures) {
            return new Response(clusterService.getClusterName(), responses, failures);
        }

        @Override
        protected NodeRequest newNodeRequest(Request request) {
            return new NodeRequest(request.indices());
        }

        @Override
        protected NodeResponse newNodeResponse(StreamInput in) throws IOException {
            return new NodeResponse(in);
        }

        @Override
        protected NodeResponse nodeOperation(NodeRequest request) {
            List<PagewiseShardStats> shards = new ArrayList<>();
            for (IndexService index : indicesService) {
                String name = index.index().getName();
                if (request.indices.length > 0 && !Regex.simpleMatch(request.indices, name)) continue;
                for (IndexShard shard : index) {
                    PagewiseShardStats stats = statsOf(name, shard);
                    if (stats != null) shards.add(stats);
                }
            }
            return new NodeResponse(clusterService.localNode(), Native.isAvailable(), shards);
        }

        private static PagewiseShardStats statsOf(String index, IndexShard shard) {
            Directory directory;
            try {
                directory = FilterDirectory.unwrap(shard.store().directory());
            } catch (RuntimeException closedMeanwhile) {
                return null;
            }
            if (!(directory instanceof PagewiseDirectory pagewise)) return null;
            List<FileTypeCache> cached = List.of();
            boolean measured = Native.isAvailable();
            if (measured) {
                try {
                    cached = pagewise.cachedByFileType();
                } catch (IOException e) {
                    throw new UncheckedIOException("measuring the page cache of " + pagewise.getDirectory(), e);
                }
            }
            return new PagewiseShardStats(index, shard.shardId().id(), shard.routingEntry().primary(), pagewise.ioByFileType(),
                    cached, measured);
        }
    }
}

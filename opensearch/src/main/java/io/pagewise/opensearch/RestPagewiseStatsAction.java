package io.pagewise.opensearch;

import org.opensearch.core.common.Strings;
import org.opensearch.rest.BaseRestHandler;
import org.opensearch.rest.RestRequest;
import org.opensearch.rest.action.RestActions;
import org.opensearch.transport.client.node.NodeClient;

import java.util.List;

import static org.opensearch.rest.RestRequest.Method.GET;

/** {@code GET _pagewise/stats[/{index}]}, with ?nodes=: the pagewise statistics of every node. */
public final class RestPagewiseStatsAction extends BaseRestHandler {
    @Override
    public String getName() {
        return "pagewise_stats";
    }

    @Override
    public List<Route> routes() {
        return List.of(new Route(GET, "/_pagewise/stats"), new Route(GET, "/_pagewise/stats/{index}"));
    }

    @Override
    protected RestChannelConsumer prepareRequest(RestRequest request, NodeClient client) {
        String[] indices = Strings.splitStringByCommaToArray(request.param("index"));
        String[] nodes = Strings.splitStringByCommaToArray(request.param("nodes"));
        PagewiseStatsAction.Request stats = new PagewiseStatsAction.Request(indices, nodes);
        return channel -> client.execute(PagewiseStatsAction.INSTANCE, stats, new RestActions.NodesResponseRestListener<>(channel));
    }
}

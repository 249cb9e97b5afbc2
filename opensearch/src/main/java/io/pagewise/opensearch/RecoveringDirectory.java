package io.pagewise.opensearch;

import org.apache.lucene.store.Directory;
import org.apache.lucene.store.FilterDirectory;
import org.apache.lucene.store.IOContext;
import org.apache.lucene.store.IndexOutput;
import org.opensearch.index.shard.IndexEventListener;
import org.opensearch.index.shard.IndexShard;
import org.opensearch.index.shard.IndexShardState;

import java.io.IOException;

/**
 * A pagewise shard's directory as OpenSearch sees it. While the shard recovers (from a peer, when it is moved or a
 * replica is built, or from a snapshot), OpenSearch writes the files it receives with IOContext.DEFAULT, the context of
 * the files searches read, which the default policy keeps cached. Those files are written once and read by no one
 * yet: they are written under the READ_ONCE policy instead (EVICT by default).
 */
final class RecoveringDirectory extends FilterDirectory {
    private volatile boolean recovering;

    RecoveringDirectory(Directory in) {
        super(in);
    }

    void recovering(boolean recovering) {
        this.recovering = recovering;
    }

    @Override
    public IndexOutput createOutput(String name, IOContext context) throws IOException {
        boolean received = recovering && context.context() == IOContext.Context.DEFAULT;
        return in.createOutput(name, received ? IOContext.READONCE : context);
    }

    /** Follows the shard's state: recovering from RECOVERING until it leaves it. */
    static final class StateListener implements IndexEventListener {
        @Override
        public void indexShardStateChanged(IndexShard shard, IndexShardState previous, IndexShardState current, String reason) {
            RecoveringDirectory directory = find(shard);
            if (directory != null) directory.recovering(current == IndexShardState.RECOVERING);
        }

        private static RecoveringDirectory find(IndexShard shard) {
            Directory directory;
            try {
                directory = shard.store().directory();
            } catch (RuntimeException closed) {
                return null;
            }
            while (directory instanceof FilterDirectory filter) {
                if (filter instanceof RecoveringDirectory recovering) return recovering;
                directory = filter.getDelegate();
            }
            return null;
        }
    }
}

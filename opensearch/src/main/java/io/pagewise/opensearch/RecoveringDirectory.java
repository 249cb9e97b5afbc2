package io.pagewise.opensearch;

import io.pagewise.CacheMode;
import io.pagewise.lucene.ContextKind;
import io.pagewise.lucene.PagewiseDirectory;
import org.apache.lucene.index.IndexFileNames;
import org.apache.lucene.store.AlreadyClosedException;
import org.apache.lucene.store.Directory;
import org.apache.lucene.store.FilterDirectory;
import org.apache.lucene.store.IOContext;
import org.apache.lucene.store.IndexInput;
import org.apache.lucene.store.IndexOutput;
import org.apache.lucene.store.MMapDirectory;
import org.apache.lucene.store.ReadAdvice;
import org.apache.lucene.store.ReadOnceHint;
import org.opensearch.index.shard.IndexEventListener;
import org.opensearch.index.shard.IndexShard;
import org.opensearch.index.shard.IndexShardState;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A pagewise shard's directory as OpenSearch sees it, where OpenSearch's IOContext does not say what a copy of a
 * shard does with its files:
 * <ul>
 * <li>While the shard recovers (from a peer, when it is moved or a replica is built, or from a snapshot), OpenSearch
 * writes the files it receives with IOContext.DEFAULT, the context of the files searches read, which the default policy
 * keeps cached. Those files are written once and read by no one yet: they are written under the READ_ONCE policy
 * instead (EVICT by default).</li>
 * <li>The segments a recovering shard opens are mapped with RANDOM advice until it has recovered, then advised as their
 * context says: opening a segment reads headers and footers, which NORMAL advice would turn into reads of whole files
 * around each page fault (the kernel's readahead, 8 MiB on some disks). Compound files are mapped RANDOM always, for
 * the same reason; Lucene advises their parts itself.</li>
 * <li>A recovery source (the copy a moved shard leaves, the primary that builds a replica) reads each file it sends once,
 * whole, through an input OpenSearch's file transfer opens with the plain IOContext.DEFAULT, which the default policy
 * maps: that read goes through the READ_ONCE policy instead, when it reads through pagewise.</li>
 * <li>A recovering shard may check its files whole before it starts (a full CheckIndex, with
 * index.shard.check_on_startup: true): the check's reads go through the READ_ONCE policy too.</li>
 * </ul>
 */
final class RecoveringDirectory extends FilterDirectory {
    /** The class whose inputs send a shard's files to a recovering copy (OpenSearch 3's peer recovery source). */
    private static final String FILE_TRANSFER = "org.opensearch.indices.replication.SegmentFileTransferHandler";
    /** The class of the full check a shard runs before it starts, with index.shard.check_on_startup: true. */
    private static final String CHECK_INDEX = "org.apache.lucene.index.CheckIndex";
    private static final StackWalker STACK = StackWalker.getInstance();

    private final PagewiseDirectory pagewise;
    private volatile boolean recovering;
    /** Mapped inputs opened while recovering, with their context, advised as it says once the shard has recovered. */
    private final List<Opened> openedRecovering = new ArrayList<>();

    private record Opened(IndexInput input, IOContext context) {}

    RecoveringDirectory(PagewiseDirectory in) {
        super(in);
        this.pagewise = in;
        // A compound file is mapped RANDOM always: Lucene advises each part through the slice it cuts, and opening it
        // reads its footer, which NORMAL advice turned into a read of the whole file around the fault (8 MiB here):
        // a merged or received compound segment was 100 % cached once opened.
        in.setReadAdvice((name, context) -> recovering || "cfs".equals(IndexFileNames.getExtension(name))
                ? Optional.of(ReadAdvice.RANDOM) : MMapDirectory.ADVISE_BY_CONTEXT.apply(name, context));
    }

    void recovering(boolean recovering) {
        List<Opened> opened;
        synchronized (openedRecovering) {
            if (this.recovering == recovering) return;
            this.recovering = recovering;
            if (recovering) return;
            opened = new ArrayList<>(openedRecovering);
            openedRecovering.clear();
        }
        for (Opened input : opened) {
            try {
                input.input().updateIOContext(input.context());
            } catch (AlreadyClosedException | NullPointerException closedMeanwhile) {
                // Closed while recovering (a reader reopened, a segment merged away): nothing left to advise. Lucene's
                // mapped input says so with a NullPointerException here, where its reads say AlreadyClosedException.
            } catch (IOException adviceRefused) {
                // The input stays RANDOM: slower sequential reads at worst, never a reason to fail the shard.
            }
        }
    }

    @Override
    public IndexOutput createOutput(String name, IOContext context) throws IOException {
        boolean received = recovering && context.context() == IOContext.Context.DEFAULT;
        return in.createOutput(name, received ? IOContext.READONCE : context);
    }

    @Override
    public IndexInput openInput(String name, IOContext context) throws IOException {
        // Lucene's own plain-DEFAULT opens (the compound reader's) must stay mapped: who opens is the only difference.
        // A full check reads each file once, deep below CheckIndex: the codec's readers open the files it checks.
        if (readOnceThroughPagewise(name) && (context == IOContext.DEFAULT && openedFrom(FILE_TRANSFER, 16)
                || recovering && openedFrom(CHECK_INDEX, 64))) {
            return in.openInput(name, IOContext.READONCE);
        }
        IndexInput input = in.openInput(name, context);
        // A compound file's parts are advised by the slices Lucene cuts, which the directory never sees: re-advising
        // the whole file by its plain context would undo the RANDOM its stored fields ask for, so it stays RANDOM.
        if (recovering && !context.hints().contains(ReadOnceHint.INSTANCE)
                && !"cfs".equals(IndexFileNames.getExtension(name))) {
            synchronized (openedRecovering) {
                if (recovering) openedRecovering.add(new Opened(input, context));
            }
        }
        return input;
    }

    /**
     * Lucene confines a mapped read-once input to the thread that opened it, and a file transfer reads its chunks on
     * several threads: only a READ_ONCE policy that reads through pagewise (no mapping) takes the file transfer's reads.
     */
    private boolean readOnceThroughPagewise(String name) {
        String extension = IndexFileNames.getExtension(name);
        CacheMode mode = pagewise.policies().policy(ContextKind.READ_ONCE, extension == null ? "" : extension).mode();
        return mode.isAvailable() && mode.needsNative();
    }

    /** {@return whether the class, or one nested in it, is among the caller's innermost frames} */
    private static boolean openedFrom(String className, int frames) {
        return STACK.walk(stack -> stack.limit(frames).map(StackWalker.StackFrame::getClassName)
                .anyMatch(name -> name.equals(className) || name.startsWith(className + "$")));
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

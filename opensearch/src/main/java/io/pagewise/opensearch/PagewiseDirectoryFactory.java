package io.pagewise.opensearch;

import io.pagewise.lucene.PagewiseDirectory;
import org.apache.lucene.store.Directory;
import org.apache.lucene.store.LockFactory;
import org.opensearch.index.IndexSettings;
import org.opensearch.index.store.FsDirectoryFactory;

import java.io.IOException;
import java.nio.file.Path;

/**
 * index.store.type: pagewise. OpenSearch's own file-system factory finds the shard's index folder and the lock factory
 * of index.store.fs.fs_lock; this one makes the directory there a PagewiseDirectory with the index's settings.
 */
public final class PagewiseDirectoryFactory extends FsDirectoryFactory {
    /** The value of index.store.type that chooses this store. */
    public static final String STORE_TYPE = "pagewise";

    @Override
    public Directory newFSDirectory(Path location, LockFactory lockFactory, IndexSettings indexSettings) throws IOException {
        PagewiseDirectory directory = PagewiseDirectory.builder(location)
                .lockFactory(lockFactory)
                .policies(PagewiseIndexSettings.policies(indexSettings.getSettings()))
                .mergeReadWindow(PagewiseIndexSettings.MERGE_READ_WINDOW.get(indexSettings.getSettings()).getBytes())
                .asyncWrites(PagewiseIndexSettings.ASYNC_WRITES.get(indexSettings.getSettings()))
                .build();
        // Mapped reads advised by the IOContext's hints (RANDOM for a segment's data files) as OpenSearch's own mmapfs
        // and hybridfs, except while the shard recovers (RecoveringDirectory). Lucene 10's default is NORMAL, under
        // which the kernel reads around each page fault (read_ahead_kb, 8 MiB on some disks), so opening a segment
        // would pull whole files into the page cache.
        return new RecoveringDirectory(directory);
    }
}

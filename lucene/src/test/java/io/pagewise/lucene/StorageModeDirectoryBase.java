package io.pagewise.lucene;

import io.pagewise.AccessHint;
import io.pagewise.CacheMode;
import java.io.IOException;
import java.nio.file.Path;
import org.apache.lucene.store.Directory;
import org.apache.lucene.tests.store.BaseDirectoryTestCase;

/**
 * Lucene's conformance suite on a PagewiseDirectory whose every context, DEFAULT included, reads and writes through
 * a StorageFile in one mode: so the whole suite runs through StorageIndexInput and StorageIndexOutput, not mmap.
 */
public abstract class StorageModeDirectoryBase extends BaseDirectoryTestCase {
    /** {@return the mode every context reads and writes in} */
    protected abstract CacheMode mode();

    @Override
    protected Directory getDirectory(Path path) throws IOException {
        AccessHint[] hints = {AccessHint.NORMAL, AccessHint.SEQUENTIAL, AccessHint.RANDOM, AccessHint.NOREUSE};
        PagewiseDirectory.Builder builder = PagewiseDirectory.builder(path);
        for (ContextKind kind : ContextKind.values()) {
            builder.policy(kind, FilePolicy.of(mode(), hints[random().nextInt(hints.length)]));
        }
        return builder.build();
    }
}

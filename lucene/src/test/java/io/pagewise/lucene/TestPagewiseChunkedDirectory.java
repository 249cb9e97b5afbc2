package io.pagewise.lucene;

import java.io.IOException;
import java.nio.file.Path;
import org.apache.lucene.store.Directory;
import org.apache.lucene.tests.store.BaseChunkedDirectoryTestCase;
import org.junit.BeforeClass;

/**
 * Lucene's suite for directories that map files in chunks, on PagewiseDirectory's memory-mapped DEFAULT reads with
 * the chunk sizes the suite picks (also ones that are not powers of two, as MMapDirectory takes them).
 */
public class TestPagewiseChunkedDirectory extends BaseChunkedDirectoryTestCase {
    @BeforeClass
    public static void announce() {
        TestLines.announce(TestPagewiseChunkedDirectory.class);
    }

    @Override
    protected Directory getDirectory(Path path, int maxChunkSize) throws IOException {
        return PagewiseDirectory.builder(path).mapChunkBytes(maxChunkSize).build();
    }
}

package io.pagewise.lucene;

import java.io.IOException;
import java.nio.file.Path;
import org.apache.lucene.store.Directory;
import org.apache.lucene.tests.store.BaseDirectoryTestCase;
import org.junit.BeforeClass;

/**
 * Lucene's conformance suite for a Directory, on PagewiseDirectory with a small merge read window, so that the
 * suite's merge-context inputs, clones and slices read ahead and drop behind across many windows.
 */
public class TestPagewiseDirectoryMergeReadWindow extends BaseDirectoryTestCase {
    @BeforeClass
    public static void announce() {
        TestLines.announce(TestPagewiseDirectoryMergeReadWindow.class);
    }

    @Override
    protected Directory getDirectory(Path path) throws IOException {
        return PagewiseDirectory.builder(path).mergeReadWindow(16 << 10).build();
    }
}

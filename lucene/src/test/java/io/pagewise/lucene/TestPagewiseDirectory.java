package io.pagewise.lucene;

import java.io.IOException;
import java.nio.file.Path;
import org.apache.lucene.store.Directory;
import org.apache.lucene.tests.store.BaseDirectoryTestCase;
import org.junit.BeforeClass;

/** Lucene's conformance suite for a Directory, on PagewiseDirectory with the default policies. */
public class TestPagewiseDirectory extends BaseDirectoryTestCase {
    @BeforeClass
    public static void announce() {
        TestLines.announce(TestPagewiseDirectory.class);
    }

    @Override
    protected Directory getDirectory(Path path) throws IOException {
        return PagewiseDirectory.open(path);
    }
}

package io.pagewise.lucene;

import java.io.IOException;
import java.nio.file.Path;
import org.apache.lucene.store.Directory;
import org.apache.lucene.tests.store.BaseLockFactoryTestCase;
import org.junit.BeforeClass;

/** Lucene's lock factory suite on PagewiseDirectory with its default lock factory (native file locks). */
public class TestPagewiseLockFactory extends BaseLockFactoryTestCase {
    @BeforeClass
    public static void announce() {
        TestLines.announce(TestPagewiseLockFactory.class);
    }

    @Override
    protected Directory getDirectory(Path path) throws IOException {
        return PagewiseDirectory.open(path);
    }
}

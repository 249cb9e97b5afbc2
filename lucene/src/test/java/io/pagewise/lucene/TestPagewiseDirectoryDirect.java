package io.pagewise.lucene;

import io.pagewise.CacheMode;
import org.junit.BeforeClass;

/** Lucene's conformance suite with every context reading and writing in DIRECT. */
public class TestPagewiseDirectoryDirect extends StorageModeDirectoryBase {
    @BeforeClass
    public static void announce() {
        TestLines.announce(TestPagewiseDirectoryDirect.class);
    }

    @Override
    protected CacheMode mode() {
        return CacheMode.DIRECT;
    }
}

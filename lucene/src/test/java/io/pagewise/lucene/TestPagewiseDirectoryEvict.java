package io.pagewise.lucene;

import io.pagewise.CacheMode;
import org.junit.BeforeClass;

/** Lucene's conformance suite with every context reading and writing in EVICT. */
public class TestPagewiseDirectoryEvict extends StorageModeDirectoryBase {
    @BeforeClass
    public static void announce() {
        TestLines.announce(TestPagewiseDirectoryEvict.class);
    }

    @Override
    protected CacheMode mode() {
        return CacheMode.EVICT;
    }
}

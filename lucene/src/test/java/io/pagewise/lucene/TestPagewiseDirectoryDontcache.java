package io.pagewise.lucene;

import io.pagewise.CacheMode;
import org.junit.BeforeClass;

/** Lucene's conformance suite with every context reading and writing in DONTCACHE. */
public class TestPagewiseDirectoryDontcache extends StorageModeDirectoryBase {
    @BeforeClass
    public static void announce() {
        TestLines.announce(TestPagewiseDirectoryDontcache.class);
    }

    @Override
    protected CacheMode mode() {
        return CacheMode.DONTCACHE;
    }
}

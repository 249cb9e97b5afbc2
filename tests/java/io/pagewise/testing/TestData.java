package io.pagewise.testing;

import java.util.Random;

/** Data for tests to write and compare: the same seed gives the same bytes, so an expectation can be made again. */
public final class TestData {
    private TestData() {}

    /** {@return length pseudo-random bytes from seed} */
    public static byte[] random(long seed, int length) {
        byte[] data = new byte[length];
        new Random(seed).nextBytes(data);
        return data;
    }
}

package io.pagewise.lucene;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import com.carrotsearch.randomizedtesting.RandomizedContext;
import io.pagewise.Native;
import org.apache.lucene.util.Version;
import org.junit.AssumptionViolatedException;

/**
 * What every test class here says first: the randomized runner's seed (to replay a failure with -Dtests.seed=...),
 * the Lucene line and the way pagewise reaches the C library; and, where the build names what a run is for
 * (pagewise.expect.*), that the run is that.
 */
final class TestLines {
    private TestLines() {}

    static void announce(Class<?> testClass) {
        String seed = RandomizedContext.current().getRunnerSeedAsString();
        String binding = Native.isAvailable() ? Native.binding() : "none (" + Native.loadError().getMessage() + ")";
        System.out.println(testClass.getSimpleName() + ": -Dtests.seed=" + seed + ", Lucene " + Version.LATEST
                + ", Java " + Runtime.version() + ", pagewise native: " + binding);
        String lucene = System.getProperty("pagewise.expect.lucene");
        if (lucene != null) assertEquals("Lucene line", Integer.parseInt(lucene), Version.LATEST.major);
        String expected = System.getProperty("pagewise.expect.binding");
        if (expected == null) return;
        if (expected.equals("none")) {
            assertFalse("the native library loaded in a run meant for the pure-Java path", Native.isAvailable());
        } else {
            assertTrue("the native library did not load: " + Native.loadError(), Native.isAvailable());
            assertEquals("binding", expected, Native.binding());
        }
    }

    /**
     * Skips the calling test with a visible message, or fails it under CI=true, where (why) it must run: what the
     * core's tests do through ExternalTools.unavailable, in JUnit 4.
     */
    static void unavailable(String message, String why) {
        if ("true".equals(System.getenv("CI"))) throw new AssertionError(message + " (CI=true: " + why + ")");
        System.err.println("SKIPPED: " + message);
        throw new AssumptionViolatedException(message);
    }
}

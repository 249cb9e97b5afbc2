package io.pagewise;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** An interrupt closes nothing on the native path; FallbackPathTest runs the same on the pure-Java path. */
@Timeout(60)
class InterruptsTest {
    @TempDir
    Path dir;

    @ParameterizedTest
    @EnumSource(value = CacheMode.class, names = {"WRITEBACK", "DIRECT"})
    void anInterruptClosesNothingOnTheNativePath(CacheMode mode) throws Exception {
        assertTrue(Native.isAvailable(), "the native library did not load: " + Native.loadError());
        Interrupts.assertAnInterruptClosesNothing(dir, mode);
    }
}

package io.pagewise.nbd.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.nbd.server.NbdServer;
import io.pagewise.testing.RecordingLogger;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The in-flight budget against the JVM's direct memory limit, and HotSpot's size syntax. */
class DirectMemoryTest {
    @Test
    void sizesAreReadAsHotSpotWritesThem() {
        assertEquals(64L << 20, DirectMemory.parse("64m"));
        assertEquals(64L << 20, DirectMemory.parse("64M"));
        assertEquals(2L << 30, DirectMemory.parse("2g"));
        assertEquals(4096, DirectMemory.parse("4k"));
        assertEquals(123456, DirectMemory.parse("123456"));
        assertEquals(-1, DirectMemory.parse(""));
        assertEquals(-1, DirectMemory.parse("lots"));
        assertEquals(-1, DirectMemory.parse("99999999999t"));
        assertTrue(DirectMemory.limit() > 0);
    }

    @Test
    void aBudgetAboveHalfTheLimitIsLoweredAndSaysSo() {
        RecordingLogger log = new RecordingLogger(null, System.Logger.Level.DEBUG);
        assertEquals(32L << 20, DirectMemory.fitBudget(64L << 20, 64L << 20, log));
        List<String> lines = log.messages(System.Logger.Level.WARNING, "in-flight bytes lowered");
        assertEquals(1, lines.size(), log.entries().toString());
        assertTrue(lines.get(0).startsWith("in-flight bytes lowered to 33554432 from 67108864"), lines.get(0));
        assertEquals(64L << 20, DirectMemory.fitBudget(64L << 20, 1L << 30, log));
        assertEquals(NbdServer.Builder.MIN_INFLIGHT_BYTES, DirectMemory.fitBudget(1L << 20, 64 << 10, log),
                "never below the smallest budget");
        assertEquals(2, log.entries().size());
    }
}

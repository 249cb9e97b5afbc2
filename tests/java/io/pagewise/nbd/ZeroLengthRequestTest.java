package io.pagewise.nbd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.CacheMode;
import io.pagewise.testing.ExternalTools;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Zero-length requests of every command, sent by libnbd with its zero-size check turned off. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ZeroLengthRequestTest {
    @TempDir
    Path dir;

    @Test
    void zeroLengthRequestsAreAnsweredAndOnlyBlockStatusIsAnError() throws Exception {
        ExternalTools.python();
        for (CacheMode mode : new CacheMode[] {CacheMode.WRITEBACK, CacheMode.EVICT, CacheMode.DIRECT}) {
            Path modeDir = java.nio.file.Files.createDirectories(dir.resolve(mode.name()));
            try (TestServer server = TestServer.start(modeDir, 4 << 20, mode, false, null)) {
                ExternalTools.Result result = ExternalTools.pythonScript("zero_length.py", server.uri(), 30);
                result.assertOk("zero_length.py (" + mode + ")");
                assertTrue(result.stdout().contains("zero-length ok"), result.stdout());
                assertEquals(1, server.server.stats().errors(NbdCommand.BLOCK_STATUS), mode + ": one refused BLOCK_STATUS");
                assertEquals(0, server.server.stats().protocolErrors(), mode.toString());
            }
        }
    }
}

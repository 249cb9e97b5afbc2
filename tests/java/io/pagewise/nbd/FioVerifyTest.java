package io.pagewise.nbd;

import io.pagewise.testing.ExternalTools;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.CacheMode;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** fio's nbd engine: random writes, 16 in flight, then every block read back and checked with crc32c. */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class FioVerifyTest {
    @TempDir
    Path dir;

    @ParameterizedTest
    @EnumSource(CacheMode.class)
    void randomWritesVerifyUnderEveryCacheMode(CacheMode mode) throws Exception {
        ExternalTools.require("fio");
        try (TestServer server = TestServer.start(dir, 64 << 20, mode)) {
            ExternalTools.Result fio = ExternalTools.run(80, "fio", "--name=verify-" + mode, "--ioengine=nbd",
                    "--uri=" + server.uri(), "--rw=randwrite", "--bsrange=4k-64k", "--size=32M", "--iodepth=16",
                    "--verify=crc32c", "--do_verify=1", "--verify_fatal=1", "--randseed=42", "--verify_state_save=0");
            fio.assertOk("fio");
            assertTrue(fio.stdout().contains("err= 0"), fio.stdout());
            assertTrue(server.server.stats().ops(NbdCommand.READ) > 0 && server.server.stats().errors(NbdCommand.WRITE) == 0);
        }
    }
}

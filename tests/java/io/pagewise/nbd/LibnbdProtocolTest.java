package io.pagewise.nbd;

import io.pagewise.backends.MemoryDevice;
import io.pagewise.testing.ExternalTools;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.CacheMode;
import io.pagewise.nbd.server.NbdServer;
import io.pagewise.nbd.server.ServerStats;
import java.nio.file.Path;
import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The protocol as libnbd (python3-libnbd) speaks it: every option, command and flag, and the errors it can send. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class LibnbdProtocolTest {
    @TempDir
    Path dir;

    @Test
    void everyHandshakeOptionWorks() throws Exception {
        ExternalTools.python();
        try (TestServer server = TestServer.start(dir, 64 << 20, CacheMode.WRITEBACK, false,
                b -> b.export("second", new MemoryDevice(1 << 20)))) {
            ExternalTools.pythonScript("protocol_options.py", server.uri(), 60).assertOk("protocol_options.py");
            assertEquals(0, server.server.stats().protocolErrors());
        }
    }

    @Test
    void listShowsDescriptionsToLibnbd() throws Exception {
        String python = ExternalTools.python();
        try (TestServer server = TestServer.start(dir, 1 << 20, CacheMode.WRITEBACK, false,
                b -> b.export("second", "the second disk", new MemoryDevice(1 << 20)))) {
            String script = String.join("\n",
                    "import os, nbd",
                    "h = nbd.NBD()",
                    "h.set_opt_mode(True)",
                    "h.connect_uri(os.environ['uri'])",
                    "h.opt_list(lambda name, description: print(repr(name), repr(description)))",
                    "h.opt_abort()",
                    "");
            ExternalTools.Result result = ExternalTools.run(java.util.Map.of("uri", server.uri()), 30, python, "-c", script)
                    .assertOk("opt_list");
            assertEquals("'' 'test disk'\n'second' 'the second disk'\n", result.stdout());
        }
    }

    @Test
    void everyCommandFlagAndErrorWorks() throws Exception {
        ExternalTools.python();
        try (TestServer server = TestServer.start(dir, 64 << 20, CacheMode.WRITEBACK)) {
            ExternalTools.Result result = ExternalTools.pythonScript("protocol_commands.py", server.uri(), 90);
            result.assertOk("protocol_commands.py");
            assertTrue(result.stdout().contains("commands ok"), result.stdout());
            ServerStats stats = server.server.stats();
            assertTrue(stats.errors(NbdCommand.READ) >= 3, "read errors: " + stats.errors(NbdCommand.READ));
            assertEquals(0, stats.protocolErrors());
        }
    }

    /** A memory export whose reads and writes each wait until {@code crowd} of them are inside (or 15 s pass). */
    private static HeldExport crowdingExport(int crowd) {
        CyclicBarrier barrier = new CyclicBarrier(crowd);
        return HeldExport.memory(1 << 20, () -> {
            try {
                barrier.await(15, TimeUnit.SECONDS);
            } catch (InterruptedException | BrokenBarrierException | TimeoutException e) {
                // go on: the test then sees fewer requests in flight than it expects
            }
        });
    }

    @Test
    void aHundredAndTwentyEightRequestsAreInFlightOnTheServerAtOnce() throws Exception {
        ExternalTools.python();
        int requests = 128;
        try (NbdServer server = NbdServer.builder().export("", crowdingExport(requests))
                .unixSocket(dir.resolve("nbd.sock")).threads(requests).start()) {
            ExternalTools.pythonScript("in_flight.py", server.uri(), 60).assertOk("in_flight.py");
            ServerStats stats = server.stats();
            assertEquals(requests, stats.ops(NbdCommand.WRITE));
            assertEquals(requests, stats.ops(NbdCommand.READ));
            assertEquals(requests, stats.mostInFlight(), "requests the server held at once");
        }
    }
}

package io.pagewise.nbd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.backends.MemoryDevice;
import io.pagewise.device.ZeroFlag;
import io.pagewise.filters.StatsFilter;
import io.pagewise.nbd.client.NbdClient;
import io.pagewise.nbd.server.NbdServer;
import io.pagewise.nbd.server.ServerStats;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The server's statistics ({@code --stats}) and the stats filter's ({@code --filter=stats}) report the same
 * traffic in the same fields and format: one line per operation, FLUSH and the flush at shutdown apart, and the
 * breakdown of request sizes and alignment.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class StatsReportsTest {
    private static final Pattern OPERATION = Pattern.compile("^([a-z][a-z ]*): (calls=.*)$");
    private static final Pattern FIELD = Pattern.compile("([a-z]+)=([^ ]+)");

    @TempDir
    Path dir;

    /** The server's counts, and the filter that counted the same traffic on the export. */
    private record Counted(ServerStats server, StatsFilter filter) {}

    /** Known requests through a server whose export is counted by a stats filter; the server has stopped. */
    private Counted knownTraffic() throws Exception {
        StatsFilter counted = new StatsFilter(new MemoryDevice(1 << 20), null, false, Duration.ZERO);
        try (NbdServer server = NbdServer.builder().export("", counted).unixSocket(dir.resolve("s.sock")).start()) {
            try (NbdClient client = NbdClient.connect(server.uri())) {
                for (long offset : new long[] {0, 4096, 8192}) client.write(ByteBuffer.allocate(4096), offset, false);
                client.write(ByteBuffer.allocate(65536), 131072, false);
                client.readFully(ByteBuffer.allocate(4096), 0);
                client.readFully(ByteBuffer.allocate(4096), 512);
                client.zero(262144, 65536, ZeroFlag.TRIM);
                client.trim(4096, 4096);
                client.flush();
                client.flush();
            }
            return new Counted(server.stats(), counted);
        }
    }

    @Test
    void serverStatsSayThemselvesInOneLine() throws Exception {
        ServerStats stats = knownTraffic().server();
        assertTrue(stats.toString().matches("ServerStats\\[elapsed=\\d+\\.\\d{3}s connections=1 requests=10 errors=0 "
                + "read=8192 written=77824 inFlight=0 mostInFlight=[1-9]\\d*]"), stats.toString());
    }

    @Test
    void theServerAndTheStatsFilterReportTheSameRequestsAlike() throws Exception {
        Counted counted = knownTraffic();
        ServerStats stats = counted.server();
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        stats.print(new PrintStream(printed, true, StandardCharsets.UTF_8));
        String fromServer = printed.toString(StandardCharsets.UTF_8);
        String fromFilter = counted.filter().format();

        Map<String, Map<String, String>> server = operations(fromServer);
        Map<String, Map<String, String>> filter = operations(fromFilter);
        List<String> names = List.of("read", "write", "zero", "trim", "flush", "flush at shutdown");
        assertEquals(names, List.copyOf(server.keySet()), fromServer);
        assertEquals(names, List.copyOf(filter.keySet()), fromFilter);
        for (String name : names) {
            assertEquals(List.of("calls", "bytes", "errors", "mean", "max", "rate"), List.copyOf(server.get(name).keySet()),
                    name + " in " + fromServer);
            assertEquals(server.get(name).keySet(), filter.get(name).keySet(), name);
            for (String field : List.of("calls", "bytes", "errors")) {
                assertEquals(server.get(name).get(field), filter.get(name).get(field), name + " " + field
                        + "\nserver:\n" + fromServer + "\nfilter:\n" + fromFilter);
            }
        }
        assertEquals("2", server.get("flush").get("calls"), "the clients' flushes alone");
        assertEquals("1", server.get("flush at shutdown").get("calls"), "the server's flush as it stopped");
        assertTrue(fromServer.startsWith("elapsed ") && fromFilter.startsWith("elapsed "), fromServer + fromFilter);

        List<String> breakdown = breakdown(fromServer);
        assertEquals(breakdown, breakdown(fromFilter), "the same breakdown of sizes and alignment\nserver:\n"
                + fromServer + "\nfilter:\n" + fromFilter);
        assertEquals(List.of(
                "read 4 KiB..8 KiB: 2 calls (100.0%), 8.00 KiB; aligned to 4 KiB 50.0%, 8 KiB 50.0%, 16 KiB 50.0%, "
                        + "32 KiB 50.0%, 64 KiB 50.0%, 128 KiB 50.0%, 256 KiB 50.0%",
                "write 4 KiB..8 KiB: 3 calls (75.0%), 12.00 KiB; aligned to 4 KiB 100.0%, 8 KiB 66.7%, 16 KiB 33.3%, "
                        + "32 KiB 33.3%, 64 KiB 33.3%, 128 KiB 33.3%, 256 KiB 33.3%",
                "write 64 KiB..128 KiB: 1 calls (25.0%), 64.00 KiB; aligned to 64 KiB 100.0%, 128 KiB 100.0%",
                "zero 64 KiB..128 KiB: 1 calls (100.0%), 64.00 KiB; aligned to 64 KiB 100.0%, 128 KiB 100.0%, "
                        + "256 KiB 100.0%",
                "trim 4 KiB..8 KiB: 1 calls (100.0%), 4.00 KiB; aligned to 4 KiB 100.0%"), breakdown);
    }

    /** The operation lines of a report: each name with its fields, in order. */
    private static Map<String, Map<String, String>> operations(String report) {
        Map<String, Map<String, String>> operations = new LinkedHashMap<>();
        for (String line : report.split("\n")) {
            Matcher m = OPERATION.matcher(line.strip());
            if (line.startsWith(" ") || !m.matches()) continue;
            Map<String, String> fields = new LinkedHashMap<>();
            Matcher f = FIELD.matcher(m.group(2));
            while (f.find()) fields.put(f.group(1), f.group(2));
            assertFalse(operations.containsKey(m.group(1)), "one line per operation: " + report);
            operations.put(m.group(1), fields);
        }
        return operations;
    }

    /** The breakdown lines of a report, each after the name of its operation. */
    private static List<String> breakdown(String report) {
        List<String> lines = new ArrayList<>();
        String operation = null;
        for (String line : report.split("\n")) {
            Matcher m = OPERATION.matcher(line);
            if (m.matches()) {
                operation = m.group(1);
            } else if (line.startsWith("  ") && operation != null) {
                lines.add(operation + " " + line.strip());
            } else {
                operation = null;
            }
        }
        return lines;
    }
}

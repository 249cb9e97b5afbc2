package io.pagewise.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.CacheMode;
import io.pagewise.Native;
import io.pagewise.backends.FileDevice;
import io.pagewise.backends.MemoryDevice;
import io.pagewise.filters.ReadOnlyFilter;
import io.pagewise.nbd.server.ExportEntry;
import io.pagewise.nbd.server.NbdServer;
import io.pagewise.testing.ExternalTools;
import io.pagewise.testing.RecordingLogger;
import java.io.RandomAccessFile;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Live metrics: the Prometheus text a server renders, served by {@link MetricsEndpoint}, scraped with curl and
 * checked with promtool; the same numbers through JMX; refused requests logged at WARNING, one line a second.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class MetricsEndpointTest {
    private static final int SIZE = 4 << 20;
    private final RecordingLogger log = new RecordingLogger("[server] ", System.Logger.Level.INFO);

    @TempDir
    Path dir;

    private static long value(String metrics, String series) {
        Matcher m = Pattern.compile("(?m)^" + Pattern.quote(series) + " (\\S+)$").matcher(metrics);
        assertTrue(m.find(), series + " in\n" + metrics);
        return (long) Double.parseDouble(m.group(1));
    }

    @Test
    void curlScrapesWhatPromtoolAcceptsWithRequestsLatencyAndPageCache() throws Exception {
        ExternalTools.require("curl", "promtool", "nbdcopy");
        Path file = dir.resolve("vm1.img");
        byte[] data = new byte[SIZE];
        new Random(1).nextBytes(data);
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
            raf.write(data);
        }
        try (FileDevice disk = FileDevice.open(file, CacheMode.WRITEBACK, StandardOpenOption.READ, StandardOpenOption.WRITE);
             NbdServer server = NbdServer.builder().export(new ExportEntry("vm1", "a file", disk, file))
                     .export("ro", new ReadOnlyFilter(new MemoryDevice(1 << 20)))
                     .unixSocket(dir.resolve("s")).logger(log).jmx("metrics-test").start();
             MetricsEndpoint endpoint = MetricsEndpoint.start(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0),
                     server::metrics)) {
            ExternalTools.run(60, "nbdcopy", server.uri("vm1"), "null:").assertOk("nbdcopy from vm1");
            // Five writes to a read-only export, all refused within a second: one WARNING line. libnbd would not send
            // them (it checks the export's flags), so they go by hand.
            writeFiveTimes(((java.net.UnixDomainSocketAddress) server.address()).getPath(), "ro");

            String metrics = ExternalTools.run(30, "curl", "-sSf", endpoint.url()).assertOk("curl").stdout();
            ExternalTools.Result check = ExternalTools.run(30, "bash", "-c", "curl -sSf " + endpoint.url() + " | promtool check metrics");
            assertEquals(0, check.status(), "promtool: " + check.stdout() + check.stderr() + "\n" + metrics);

            assertEquals(SIZE, value(metrics, "pagewise_nbd_request_bytes_total{export=\"vm1\",command=\"read\"}"));
            long reads = value(metrics, "pagewise_nbd_requests_total{export=\"vm1\",command=\"read\"}");
            assertTrue(reads > 0);
            assertEquals(reads, value(metrics, "pagewise_nbd_request_duration_seconds_count{export=\"vm1\",command=\"read\"}"));
            assertEquals(reads, value(metrics, "pagewise_nbd_request_duration_seconds_bucket{export=\"vm1\",command=\"read\",le=\"+Inf\"}"));
            // Bounds written as Prometheus' own clients write them (0.0001, not 1.0E-4), each at most the next one's count.
            long fastest = value(metrics, "pagewise_nbd_request_duration_seconds_bucket{export=\"vm1\",command=\"read\",le=\"0.0001\"}");
            assertTrue(fastest <= value(metrics, "pagewise_nbd_request_duration_seconds_bucket{export=\"vm1\",command=\"read\",le=\"10\"}"));
            assertEquals(5, value(metrics, "pagewise_nbd_request_errors_total{export=\"ro\",command=\"write\"}"));
            long handshakes = value(metrics, "pagewise_nbd_handshakes_total");
            assertTrue(handshakes >= 2, "nbdcopy's connections and the writer's: " + handshakes);
            assertEquals(SIZE, value(metrics, "pagewise_nbd_export_size_bytes{export=\"vm1\"}"));
            assertEquals(0, value(metrics, "pagewise_nbd_requests_in_flight"));
            assertEquals(1, value(metrics, "pagewise_info{native=\"" + (Native.isAvailable() ? Native.binding() : "none")
                    + "\",async_io=\"" + Native.asyncPath() + "\"}"), "pagewise_info with the binding and the async path");
            if (metrics.contains("pagewise_page_cache_bytes{")) { // Linux 6.5+ (cachestat)
                long cached = value(metrics, "pagewise_page_cache_bytes{export=\"vm1\",state=\"cached\"}");
                assertTrue(cached > 0 && cached <= SIZE, "the file written and read through the cache is cached: " + cached);
            }

            assertEquals(1, log.messages(System.Logger.Level.WARNING, "WRITE 0+512 refused: export is read-only").size(),
                    log.entries().toString());

            MBeanServer jmx = ManagementFactory.getPlatformMBeanServer();
            ObjectName serverBean = new ObjectName("io.pagewise:type=NbdServer,name=\"metrics-test\"");
            assertEquals(handshakes, jmx.getAttribute(serverBean, "Handshakes"));
            ObjectName vm1 = new ObjectName("io.pagewise:type=NbdServer,name=\"metrics-test\",export=\"vm1\"");
            assertEquals((long) SIZE, jmx.getAttribute(vm1, "ReadBytes"));
            long all = 0;
            Matcher each = Pattern.compile("(?m)^pagewise_nbd_requests_total\\{export=\"vm1\",[^}]*\\} (\\d+)$").matcher(metrics);
            while (each.find()) all += Long.parseLong(each.group(1));
            assertEquals(all, jmx.getAttribute(vm1, "Requests"), "every command's requests, as the text counts them");

            assertEquals(404, status(endpoint.url().replace("/metrics", "/other")));
            server.close();
            assertTrue(jmx.queryNames(new ObjectName("io.pagewise:type=NbdServer,name=\"metrics-test\",*"), null).isEmpty(),
                    "the beans go when the server stops");
        }
    }

    /** Chooses export by NBD_OPT_EXPORT_NAME and sends five 512-byte WRITEs, reading their five simple replies. */
    private static void writeFiveTimes(Path socket, String export) throws Exception {
        try (java.nio.channels.SocketChannel ch = java.nio.channels.SocketChannel.open(java.net.UnixDomainSocketAddress.of(socket))) {
            java.nio.ByteBuffer greeting = java.nio.ByteBuffer.allocate(18);
            while (greeting.hasRemaining()) ch.read(greeting);
            byte[] name = export.getBytes(java.nio.charset.StandardCharsets.UTF_8);
            java.nio.ByteBuffer hello = java.nio.ByteBuffer.allocate(4 + 16 + name.length).putInt(3) // FIXED_NEWSTYLE | NO_ZEROES
                    .putLong(0x49484156454F5054L).putInt(1).putInt(name.length).put(name).flip(); // IHAVEOPT, EXPORT_NAME
            while (hello.hasRemaining()) ch.write(hello);
            java.nio.ByteBuffer sizeAndFlags = java.nio.ByteBuffer.allocate(10);
            while (sizeAndFlags.hasRemaining()) ch.read(sizeAndFlags);
            for (int i = 0; i < 5; i++) {
                java.nio.ByteBuffer write = java.nio.ByteBuffer.allocate(28 + 512).putInt(0x25609513).putShort((short) 0)
                        .putShort((short) 1).putLong(i).putLong(0).putInt(512).put(new byte[512]).flip();
                while (write.hasRemaining()) ch.write(write);
                java.nio.ByteBuffer reply = java.nio.ByteBuffer.allocate(16);
                while (reply.hasRemaining()) ch.read(reply);
                assertEquals(1, reply.getInt(4), "EPERM for a write to a read-only export");
            }
        }
    }

    private static int status(String url) throws Exception {
        String code = ExternalTools.run(30, "curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", url).stdout().trim();
        return Integer.parseInt(code);
    }

    @Test
    void stalledConnectionsDoNotHoldUpAScrape() throws Exception {
        try (MetricsEndpoint endpoint = MetricsEndpoint.start(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0),
                () -> "up 1\n")) {
            List<java.net.Socket> stalled = new ArrayList<>();
            try {
                // More half-sent requests than the endpoint has threads: each stops before its blank line.
                for (int i = 0; i < 8; i++) {
                    java.net.Socket s = new java.net.Socket(InetAddress.getLoopbackAddress(), endpoint.address().getPort());
                    s.getOutputStream().write("GET /metrics HTTP/1.1\r\nHost: x\r\n".getBytes(StandardCharsets.US_ASCII));
                    s.getOutputStream().flush();
                    stalled.add(s);
                }
                long start = System.nanoTime();
                String response;
                try (java.net.Socket scrape = new java.net.Socket(InetAddress.getLoopbackAddress(), endpoint.address().getPort())) {
                    scrape.setSoTimeout((int) TimeUnit.SECONDS.toMillis(3 * MetricsEndpoint.REQUEST_SECONDS));
                    scrape.getOutputStream().write("GET /metrics HTTP/1.0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                    response = new String(scrape.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
                }
                assertTrue(response.startsWith("HTTP/1.1 200"), response);
                assertTrue(response.endsWith("\r\n\r\nup 1\n"), response);
                assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(2 * MetricsEndpoint.REQUEST_SECONDS),
                        "the scrape waited for the stalled connections to be dropped and more");
                // The stalled ones are dropped once their time is up.
                java.net.Socket first = stalled.get(0);
                first.setSoTimeout((int) TimeUnit.SECONDS.toMillis(3 * MetricsEndpoint.REQUEST_SECONDS));
                assertEquals(-1, first.getInputStream().read(), "a half-sent request is disconnected");
            } finally {
                for (java.net.Socket s : stalled) s.close();
            }
        }
    }

    @Test
    void badAddressesAreRefusedNamingTheValue() throws Exception {
        assertTrue(assertThrows(IllegalArgumentException.class, () -> MetricsEndpoint.parseAddress("9109")).getMessage()
                .contains("--metrics=9109"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> MetricsEndpoint.parseAddress("127.0.0.1:99999"))
                .getMessage().contains("port"));
        assertEquals(9109, MetricsEndpoint.parseAddress(":9109").getPort());
        assertTrue(MetricsEndpoint.parseAddress("[::1]:0").getAddress().isLoopbackAddress());
        try (MetricsEndpoint taken = MetricsEndpoint.start(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), () -> "")) {
            java.io.IOException e = assertThrows(java.io.IOException.class, () -> MetricsEndpoint.start(taken.address(), () -> ""));
            assertTrue(e.getMessage().contains("--metrics: cannot listen on 127.0.0.1:" + taken.address().getPort()), e.getMessage());
            assertNotEquals(0, taken.address().getPort());
        }
    }
}

package io.pagewise.nbd.server.metrics;

import io.pagewise.CacheState;
import io.pagewise.Native;
import io.pagewise.PageCache;
import io.pagewise.nbd.NbdCommand;
import io.pagewise.nbd.server.ExportEntry;
import io.pagewise.nbd.server.ExportStats;
import io.pagewise.nbd.server.LatencyHistogram;
import io.pagewise.nbd.server.NbdServer;
import io.pagewise.nbd.server.ServerStats;
import java.io.IOException;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * A server's metrics in the Prometheus text exposition format 0.0.4: the connection counters and gauges, per export
 * and command the requests, bytes, errors and latency histograms, and each file export's page-cache state.
 * docs/SERVER.md lists every metric.
 */
public final class PrometheusText {
    private final StringBuilder out = new StringBuilder(8192);

    private PrometheusText() {}

    public static String of(NbdServer server) {
        return new PrometheusText().server(server).toString();
    }

    private PrometheusText server(NbdServer server) {
        ServerStats s = server.stats();
        counter("pagewise_nbd_connections_accepted_total", "Connections accepted.", s.connections());
        gauge("pagewise_nbd_connections_open", "Connections open now, in the handshake or in transmission.", server.connectionCount());
        gauge("pagewise_nbd_connections_transmitting", "Connections in transmission now.", server.transmittingCount());
        counter("pagewise_nbd_handshakes_total", "Handshakes that ended with the client in transmission.", s.handshakes());
        header("pagewise_nbd_connections_refused_total", "counter", "Clients refused, by reason.");
        sample("pagewise_nbd_connections_refused_total", "reason=\"max_connections\"", s.rejectedConnections());
        sample("pagewise_nbd_connections_refused_total", "reason=\"allow_list\"", s.accessRefusals());
        header("pagewise_nbd_connections_dropped_total", "counter", "Connections the server dropped, by reason.");
        sample("pagewise_nbd_connections_dropped_total", "reason=\"protocol_error\"", s.protocolErrors());
        sample("pagewise_nbd_connections_dropped_total", "reason=\"handshake_timeout\"", s.handshakeTimeouts());
        sample("pagewise_nbd_connections_dropped_total", "reason=\"handshake_room\"", s.droppedHandshakes());
        sample("pagewise_nbd_connections_dropped_total", "reason=\"idle_timeout\"", s.idleTimeouts());
        sample("pagewise_nbd_connections_dropped_total", "reason=\"reply_timeout\"", s.replyTimeouts());
        gauge("pagewise_nbd_requests_in_flight", "Requests read and not yet answered.", s.requestsInFlight());
        gauge("pagewise_nbd_inflight_bytes", "Bytes of the in-flight budget that requests hold now.", s.inflightBytesInUse());
        counter("pagewise_nbd_unknown_commands_total", "Requests with a command number NBD does not define.", s.unknownCommands());
        header("pagewise_info", "gauge", "Always 1: how this JVM reaches the kernel, the native calls' binding "
                + "(JNI, FFM or none) and where asynchronous I/O runs (io_uring, or threads and why).");
        sample("pagewise_info", "native=\"" + escape(Native.isAvailable() ? Native.binding() : "none")
                + "\",async_io=\"" + escape(Native.asyncPath()) + "\"", 1);
        requests(s.exports());
        exports(server);
        return this;
    }

    private void requests(Map<String, ExportStats> exports) {
        header("pagewise_nbd_requests_total", "counter", "Requests answered, by export and command, failed ones included.");
        each(exports, (labels, e, c) -> sample("pagewise_nbd_requests_total", labels, e.ops(c)));
        header("pagewise_nbd_request_bytes_total", "counter", "Bytes moved by successful READ, WRITE, TRIM, WRITE_ZEROES and CACHE requests.");
        each(exports, (labels, e, c) -> sample("pagewise_nbd_request_bytes_total", labels, e.bytes(c)));
        header("pagewise_nbd_request_errors_total", "counter", "Requests answered with an error.");
        each(exports, (labels, e, c) -> sample("pagewise_nbd_request_errors_total", labels, e.errors(c)));
        String name = "pagewise_nbd_request_duration_seconds";
        header(name, "histogram", "Time from reading a request to its reply being ready.");
        double[] bounds = LatencyHistogram.bounds();
        each(exports, (labels, e, c) -> {
            LatencyHistogram histogram = e.latency(c);
            long[] counts = histogram.counts();
            long cumulative = 0;
            for (int i = 0; i < counts.length; i++) {
                cumulative += counts[i];
                String le = i < bounds.length ? number(bounds[i]) : "+Inf";
                sample(name + "_bucket", labels + ",le=\"" + le + "\"", cumulative);
            }
            out.append(name).append("_sum{").append(labels).append("} ").append(number(histogram.sumSeconds())).append('\n');
            sample(name + "_count", labels, cumulative);
        });
    }

    private interface PerCommand {
        void write(String labels, ExportStats export, NbdCommand command);
    }

    /** Each command an export has had requests of. */
    private static void each(Map<String, ExportStats> exports, PerCommand body) {
        for (ExportStats export : exports.values()) {
            for (NbdCommand command : NbdCommand.values()) {
                if (export.ops(command) == 0) continue;
                body.write("export=\"" + escape(export.name()) + "\",command=\"" + command.name().toLowerCase(Locale.ROOT) + "\"",
                        export, command);
            }
        }
    }

    private void exports(NbdServer server) {
        header("pagewise_nbd_export_size_bytes", "gauge", "Size of each export served so far.");
        for (ExportEntry entry : server.exports()) {
            try {
                sample("pagewise_nbd_export_size_bytes", "export=\"" + escape(entry.name()) + "\"", entry.device().size());
            } catch (IOException e) {
                // a device that cannot tell its size now has no sample
            }
        }
        if (!Native.isAvailable()) return;
        header("pagewise_page_cache_bytes", "gauge", "Page-cache state of each file export (cachestat, Linux 6.5+): "
                + "cached, dirty, writeback, evicted, recently_evicted.");
        for (ExportEntry entry : server.exports()) {
            if (entry.file() == null) continue;
            Optional<CacheState> state;
            try {
                state = PageCache.cacheState(entry.file());
            } catch (IOException | RuntimeException e) {
                continue; // the file went away or cannot be opened: no sample rather than a failed scrape
            }
            if (state.isEmpty()) continue;
            CacheState c = state.get();
            String export = "export=\"" + escape(entry.name()) + "\",state=\"";
            long page = c.pageSize();
            sample("pagewise_page_cache_bytes", export + "cached\"", c.cached() * page);
            sample("pagewise_page_cache_bytes", export + "dirty\"", c.dirty() * page);
            sample("pagewise_page_cache_bytes", export + "writeback\"", c.writeback() * page);
            sample("pagewise_page_cache_bytes", export + "evicted\"", c.evicted() * page);
            sample("pagewise_page_cache_bytes", export + "recently_evicted\"", c.recentlyEvicted() * page);
        }
    }

    private void counter(String name, String help, long value) {
        header(name, "counter", help);
        sample(name, null, value);
    }

    private void gauge(String name, String help, long value) {
        header(name, "gauge", help);
        sample(name, null, value);
    }

    private void header(String name, String type, String help) {
        out.append("# HELP ").append(name).append(' ').append(help).append('\n');
        out.append("# TYPE ").append(name).append(' ').append(type).append('\n');
    }

    private void sample(String name, String labels, long value) {
        out.append(name);
        if (labels != null) out.append('{').append(labels).append('}');
        out.append(' ').append(value).append('\n');
    }

    /** A sample value or bucket bound as Prometheus' own clients write it: 0.0001, 2.5, 10; not 1.0E-4. */
    private static String number(double value) {
        if (Double.isNaN(value)) return "NaN";
        if (Double.isInfinite(value)) return value > 0 ? "+Inf" : "-Inf";
        return java.math.BigDecimal.valueOf(value).stripTrailingZeros().toPlainString();
    }

    /** A label value: backslash, double quote and line feed escaped, as the format asks. */
    static String escape(String value) {
        return value.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
    }

    @Override
    public String toString() {
        return out.toString();
    }
}

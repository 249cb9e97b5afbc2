package io.pagewise.cli;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.Closeable;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * {@code --metrics=ADDR:PORT}: an HTTP endpoint that answers {@code GET /metrics} with what a supplier gives (the
 * server's {@code NbdServer.metrics()}, Prometheus text), and anything else with 404 or 405. It runs on the JDK's own
 * HTTP server (module jdk.httpserver, in every JDK): a scrape every few seconds needs no more, and the jar stays
 * without dependencies. A thread per connection (at most 32), and a client that does not finish sending its request within
 * {@link #REQUEST_SECONDS} is disconnected: one stalled or slow connection (a port scanner, a stuck scraper) must not
 * keep the next scrape waiting. A scrape that fails to render is a 500 with the reason, never a stopped server.
 */
final class MetricsEndpoint implements Closeable {
    /** The content type of the Prometheus text format. */
    static final String CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";
    /** How long a client may take to send its request, and to take the answer. */
    static final int REQUEST_SECONDS = 10;
    private static final int MAX_THREADS = 32;

    static {
        // The JDK's HTTP server reads these once, when it is first used; without them it waits for ever.
        if (System.getProperty("sun.net.httpserver.maxReqTime") == null) {
            System.setProperty("sun.net.httpserver.maxReqTime", Integer.toString(REQUEST_SECONDS));
        }
        if (System.getProperty("sun.net.httpserver.maxRspTime") == null) {
            System.setProperty("sun.net.httpserver.maxRspTime", Integer.toString(3 * REQUEST_SECONDS));
        }
    }

    private final HttpServer http;
    private final ExecutorService thread;

    private MetricsEndpoint(HttpServer http, ExecutorService thread) {
        this.http = http;
        this.thread = thread;
    }

    /** Listens on address and serves metrics at /metrics until closed. */
    static MetricsEndpoint start(InetSocketAddress address, Supplier<String> metrics) throws IOException {
        HttpServer http;
        try {
            http = HttpServer.create(address, 16);
        } catch (IOException e) {
            throw new IOException("--metrics: cannot listen on " + describe(address) + ": " + e.getMessage(), e);
        }
        // The JDK's server gives each connection a thread that reads its request: stalled connections hold theirs
        // until REQUEST_SECONDS drop them, so threads are made as needed (idle ones end), and a connection beyond
        // MAX_THREADS at once is closed rather than queued behind them.
        ExecutorService thread = new ThreadPoolExecutor(0, MAX_THREADS, 30, TimeUnit.SECONDS, new SynchronousQueue<>(), r -> {
            Thread t = new Thread(r, "metrics-http");
            t.setDaemon(true);
            return t;
        });
        http.setExecutor(thread);
        http.createContext("/", exchange -> answer(exchange, metrics));
        http.start();
        return new MetricsEndpoint(http, thread);
    }

    /**
     * Parses ADDR:PORT, [IPV6]:PORT or :PORT (loopback); a host name is looked up once, here.
     *
     * @throws IllegalArgumentException naming the value and what is wrong with it
     */
    static InetSocketAddress parseAddress(String value) {
        int colon = value.lastIndexOf(':');
        if (colon < 0) throw new IllegalArgumentException("--metrics=" + value + ": expected ADDR:PORT, such as 127.0.0.1:9109");
        String host = value.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) host = host.substring(1, host.length() - 1);
        int port;
        try {
            port = Integer.parseInt(value.substring(colon + 1));
        } catch (NumberFormatException e) {
            port = -1;
        }
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("--metrics=" + value + ": the port must be a number from 0 to 65535");
        }
        try {
            return new InetSocketAddress(host.isEmpty() ? InetAddress.getLoopbackAddress() : InetAddress.getByName(host), port);
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("--metrics=" + value + ": unknown host '" + host + "'");
        }
    }

    /** {@return the address it listens on}: the real port when port 0 was asked for */
    InetSocketAddress address() {
        return http.getAddress();
    }

    /** {@return the URL to scrape} */
    String url() {
        return "http://" + describe(address()) + "/metrics";
    }

    @Override
    public void close() {
        http.stop(0);
        thread.shutdownNow();
    }

    private static void answer(HttpExchange exchange, Supplier<String> metrics) throws IOException {
        try (exchange) {
            String path = exchange.getRequestURI().getPath();
            if (!path.equals("/metrics")) {
                send(exchange, 404, "text/plain; charset=utf-8", "no such page: " + path + " (metrics are at /metrics)\n");
            } else if (!exchange.getRequestMethod().equals("GET") && !exchange.getRequestMethod().equals("HEAD")) {
                exchange.getResponseHeaders().set("Allow", "GET, HEAD");
                send(exchange, 405, "text/plain; charset=utf-8", exchange.getRequestMethod() + " is not allowed: use GET\n");
            } else {
                String body;
                try {
                    body = metrics.get();
                } catch (RuntimeException e) {
                    send(exchange, 500, "text/plain; charset=utf-8", "metrics failed: " + e + "\n");
                    return;
                }
                send(exchange, 200, CONTENT_TYPE, exchange.getRequestMethod().equals("HEAD") ? null : body);
            }
        }
    }

    private static void send(HttpExchange exchange, int status, String type, String body) throws IOException {
        exchange.getResponseHeaders().set("Content-Type", type);
        byte[] bytes = body == null ? new byte[0] : body.getBytes(StandardCharsets.UTF_8);
        exchange.sendResponseHeaders(status, bytes.length == 0 ? -1 : bytes.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(bytes);
        }
    }

    private static String describe(InetSocketAddress address) {
        String host = address.getAddress().getHostAddress();
        return (host.contains(":") ? "[" + host + "]" : host) + ":" + address.getPort();
    }
}

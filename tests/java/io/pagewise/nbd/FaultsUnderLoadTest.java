package io.pagewise.nbd;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.pagewise.CacheMode;
import io.pagewise.Extent;
import io.pagewise.backends.FileDevice;
import io.pagewise.device.BlockDevice;
import io.pagewise.device.ZeroFlag;
import io.pagewise.filters.FaultFilter;
import io.pagewise.filters.FaultFilter.Injection;
import io.pagewise.filters.FaultFilter.Operation;
import io.pagewise.nbd.client.NbdClient;
import io.pagewise.nbd.server.NbdServer;
import io.pagewise.nbd.server.ServerStats;
import io.pagewise.testing.ExternalTools;
import io.pagewise.testing.RecordingLogger;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Faults under load: an in-process server over a file export that fails 10 % of every operation's
 * calls (EIO or ENOSPC), driven by 4 clients of one connection each, each keeping 64 mixed requests in flight, for
 * {@code -Dpagewise.faults.seconds} (default 60). Each of the 256 request slots owns a region of the export and
 * sends its next request when the last is answered, so it keeps an exact model of its region: a failed request
 * changed nothing (the wrapper fails before it forwards), a successful WRITE or WRITE_ZEROES sets the bytes, a
 * successful TRIM makes them unknown. Then: every failed request carries the error injected into its call, every
 * injection reached a client (or was the hole lookup of a READ, which the server answers without it), every READ
 * matched the model, the server's budget and buffers all came back, and a fresh client is served cleanly.
 */
@Timeout(value = 6, unit = TimeUnit.MINUTES)
class FaultsUnderLoadTest {
    private static final int CONNECTIONS = 4;
    private static final int IN_FLIGHT = 64;
    private static final int SECTOR = 512;
    private static final int REGION = 256 * 1024;
    private static final int SECTORS = REGION / SECTOR;
    private static final int MAX_SECTORS = 64; // 32 KiB requests at most
    private static final long SIZE = (long) CONNECTIONS * IN_FLIGHT * REGION; // 64 MiB
    private static final long BUDGET = 1 << 20; // small, so requests also wait for budget while others fail

    @TempDir
    Path dir;

    /** A failed request as the client saw it. */
    private record Observed(String command, long offset, long length, int error) {}

    private final ConcurrentLinkedQueue<Observed> observed = new ConcurrentLinkedQueue<>();
    private final ConcurrentLinkedQueue<String> problems = new ConcurrentLinkedQueue<>();
    /** offset:length of every READ sent: the server looks for their holes with a BLOCK_STATUS call of the same range. */
    private final Set<String> readRanges = ConcurrentHashMap.newKeySet();
    private final Map<String, AtomicLong> sent = new ConcurrentHashMap<>();
    private volatile boolean stopping;

    @Test
    void tenPercentFailuresOnFourConnectionsOfSixtyFourRequests() throws Exception {
        long seconds = Long.getLong("pagewise.faults.seconds", 60);
        assertTrue(seconds > 0 && seconds <= 240, "pagewise.faults.seconds must be 1..240 (the test times out at 6 minutes): " + seconds);
        long seed = Long.getLong("pagewise.faults.seed", 14);
        Path file = dir.resolve("disk.img");
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
            raf.setLength(SIZE);
        }
        // Only errors: per-request WARNING lines of a minute of failures would flood the report.
        RecordingLogger log = new RecordingLogger("[server] ", System.Logger.Level.ERROR);
        ExecutorService checkers = Executors.newFixedThreadPool(CONNECTIONS, r -> {
            Thread t = new Thread(r, "faults-test-check");
            t.setDaemon(true); // one blocked on a stuck connection must not keep the JVM alive
            return t;
        });
        FaultFilter faults = FaultFilter.wrap(FileDevice.open(file, CacheMode.WRITEBACK, java.nio.file.StandardOpenOption.READ, java.nio.file.StandardOpenOption.WRITE))
                .fail(0.10, NbdException.EIO, NbdException.ENOSPC).seed(seed).recordInjections().build();
        NbdServer server = null;
        List<NbdClient> clients = new ArrayList<>();
        boolean passed = false;
        try {
            server = NbdServer.builder().export("", faults).unixSocket(dir.resolve("nbd.sock"))
                    .maxInflightBytes(BUDGET).logger(log).start();
            CountDownLatch finished = new CountDownLatch(CONNECTIONS * IN_FLIGHT);
            long start = System.nanoTime();
            for (int c = 0; c < CONNECTIONS; c++) {
                NbdClient client = NbdClient.connect(server.uri(), 1);
                clients.add(client);
                for (int s = 0; s < IN_FLIGHT; s++) {
                    int index = c * IN_FLIGHT + s;
                    Slot slot = new Slot(client, (long) index * REGION, new Random(seed * 1000 + index), checkers, finished);
                    checkers.execute(slot::next); // not on this thread: a sender may block when the server stops reading
                }
            }
            Thread.sleep(seconds * 1000);
            stopping = true;
            if (!finished.await(30, TimeUnit.SECONDS)) {
                fail(finished.getCount() + " requests still unanswered 30 s after the load stopped; the server: "
                        + gauges(server.stats()));
            }
            for (NbdClient client : clients) client.close();
            clients.clear();
            double elapsed = (System.nanoTime() - start) / 1e9;
            assertTrue(problems.isEmpty(), problems.size() + " problems, the first: " + problems.peek());

            Map<String, Long> failedPerCommand = matchFailuresToInjections(faults.injections());
            ServerStats stats = server.stats();
            for (Operation op : List.of(Operation.READ, Operation.WRITE, Operation.ZERO, Operation.TRIM,
                    Operation.FLUSH, Operation.BLOCK_STATUS)) {
                long failed = failedPerCommand.getOrDefault(op.command(), 0L);
                assertTrue(failed > 0, "some " + op.command() + " requests failed");
                assertEquals(failed, stats.errors(NbdCommand.valueOf(op.command())), "the server counted the failed " + op.command());
                assertEquals(sent(op.command()), stats.ops(NbdCommand.valueOf(op.command())), "the server answered every " + op.command());
            }
            assertTrue(faults.injected(Operation.READ, NbdException.EIO) > 0
                    && faults.injected(Operation.READ, NbdException.ENOSPC) > 0, "both errors were injected");
            assertAllGivenBack(stats, "after the load");
            assertTrue(stats.peakPayloadBytesHeld() > 0 && stats.peakPayloadBytesHeld() <= BUDGET,
                    "payload buffers stayed within the budget: " + stats.peakPayloadBytesHeld());

            long requests = sent.values().stream().mapToLong(AtomicLong::get).sum();
            long injected = faults.injections().size();
            System.out.printf(Locale.ROOT, "faults under load: %d requests in %.1f s (%.0f/s) on %d connections x %d in "
                    + "flight, %d faults injected (%d reached clients, the rest were READ hole lookups), seed %d, "
                    + "most requests in flight at the server %d%n", requests, elapsed, requests / elapsed, CONNECTIONS,
                    IN_FLIGHT, injected, observed.size(), seed, stats.mostInFlight());
            stats.print(System.out);

            faults.setActive(false);
            servesAFreshClient(server);
            assertAllGivenBack(stats, "after the fresh client");
            assertTrue(log.entries().isEmpty(), "the server logged errors: " + log.entries());
            passed = true;
        } finally {
            stopping = true;
            checkers.shutdownNow();
            closeWithin(passed, clients, server, faults);
        }
    }

    /**
     * Closes everything, within 30 s. A server whose budget leaked never answers, so a client's sender stays
     * blocked on the full socket (and close waits for it) and the server's readers wait for budget forever: after
     * a failure the test must end all the same, leaving the stuck threads (daemons) behind.
     */
    private static void closeWithin(boolean passed, List<NbdClient> clients, NbdServer server, BlockDevice export)
            throws Exception {
        Exception[] failure = new Exception[1];
        Thread closer = new Thread(() -> {
            try {
                for (NbdClient client : clients) client.close();
                if (server != null) server.close();
                export.close();
            } catch (Exception e) {
                failure[0] = e;
            }
        }, "faults-test-close");
        closer.setDaemon(true);
        closer.start();
        closer.join(30_000);
        if (!passed) return; // the test's own failure says more
        if (closer.isAlive()) fail("the clients and server did not close within 30 s");
        if (failure[0] != null) throw failure[0];
    }

    private static String gauges(ServerStats stats) {
        return "requests in flight " + stats.requestsInFlight() + ", in-flight budget in use " + stats.inflightBytesInUse()
                + " bytes, payload buffers out " + stats.payloadBuffersOutstanding() + " (" + stats.payloadBytesHeld()
                + " bytes)";
    }

    /**
     * fio verify through random delays (0 to 2 ms on every call): 4 jobs of 64 in flight write random blocks,
     * then read each back and check its crc32c, while the delays reorder the replies. Delays only: fio ends a job
     * at its first I/O error, and a block whose write failed would then fail verification, so errors are the
     * other test's part.
     */
    @Test
    void fioVerifiesThroughRandomDelays() throws Exception {
        ExternalTools.require("fio");
        Path file = dir.resolve("fio.img");
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
            raf.setLength(SIZE);
        }
        RecordingLogger log = new RecordingLogger("[server] ", System.Logger.Level.WARNING);
        try (FaultFilter delayed = FaultFilter.wrap(FileDevice.open(file, CacheMode.WRITEBACK, java.nio.file.StandardOpenOption.READ, java.nio.file.StandardOpenOption.WRITE))
                     .delay(Duration.ZERO, Duration.ofMillis(2)).seed(14).build();
             NbdServer server = NbdServer.builder().export("", delayed).unixSocket(dir.resolve("fio.sock"))
                     .maxInflightBytes(BUDGET).logger(log).start()) {
            ExternalTools.Result fio = ExternalTools.run(120, "fio", "--name=delayed", "--ioengine=nbd",
                    "--uri=" + server.uri(), "--rw=randwrite", "--bsrange=4k-64k", "--numjobs=" + CONNECTIONS,
                    "--size=16M", "--offset_increment=16M", "--iodepth=" + IN_FLIGHT, "--verify=crc32c",
                    "--do_verify=1", "--verify_fatal=1", "--randseed=42", "--verify_state_save=0", "--group_reporting");
            fio.assertOk("fio");
            assertTrue(fio.stdout().contains("err= 0"), fio.stdout());
            assertTrue(delayed.delayed(Operation.WRITE) > 0 && delayed.delayed(Operation.READ) > 0,
                    "writes and reads were delayed");
            assertEquals(0, server.stats().errors(NbdCommand.WRITE) + server.stats().errors(NbdCommand.READ));
            assertAllGivenBack(server.stats(), "after fio");
            assertTrue(log.entries().isEmpty(), "the server logged warnings: " + log.entries());
        }
    }

    /**
     * Every failure a client saw is an injection of its command, range and error, each injection matched to one
     * failure at most; every injection left over is the hole lookup of a READ. Returns the failures per command.
     * Each slot has one request in flight in a region of its own, so only a region's injections can match its
     * failures; a READ's matches any READ call within its range (a sparse range is read one data run at a time),
     * so the matching looks for augmenting paths rather than taking the first that fits.
     */
    private Map<String, Long> matchFailuresToInjections(List<Injection> injections) {
        List<Observed> failures = new ArrayList<>(observed);
        Map<Long, List<Integer>> byRegion = new HashMap<>();
        for (int i = 0; i < injections.size(); i++) {
            byRegion.computeIfAbsent(injections.get(i).offset() / REGION, k -> new ArrayList<>()).add(i);
        }
        List<List<Integer>> candidates = new ArrayList<>();
        for (Observed o : failures) {
            List<Integer> fitting = new ArrayList<>();
            for (int i : byRegion.getOrDefault(o.offset / REGION, List.of())) {
                if (fits(injections.get(i), o)) fitting.add(i);
            }
            if (fitting.isEmpty()) fail("a client saw a fault that was not injected: " + o);
            candidates.add(fitting);
        }
        int[] failureOf = new int[injections.size()];
        java.util.Arrays.fill(failureOf, -1);
        for (int f = 0; f < failures.size(); f++) {
            if (!assign(f, candidates, failureOf, new boolean[injections.size()])) {
                fail("more failures than injections that fit them: " + failures.get(f));
            }
        }
        Map<String, Long> perCommand = new HashMap<>();
        for (Observed o : failures) perCommand.merge(o.command, 1L, Long::sum);
        for (int i = 0; i < injections.size(); i++) {
            if (failureOf[i] >= 0) continue;
            Injection leftover = injections.get(i);
            boolean holeLookup = leftover.operation() == Operation.BLOCK_STATUS
                    && readRanges.contains(leftover.offset() + ":" + leftover.length());
            assertTrue(holeLookup, "an injected fault reached no client: " + leftover);
        }
        return perCommand;
    }

    /** Whether injection may be what failed the request o: its command and error, its range (within, for a READ). */
    private static boolean fits(Injection injection, Observed o) {
        if (!injection.operation().command().equals(o.command) || injection.error() != o.error) return false;
        if (o.command.equals("READ")) {
            return injection.offset() >= o.offset && injection.offset() + injection.length() <= o.offset + o.length;
        }
        return injection.offset() == o.offset && injection.length() == o.length;
    }

    /** Kuhn's augmenting path: gives failure f an injection, moving earlier failures to others where needed. */
    private static boolean assign(int f, List<List<Integer>> candidates, int[] failureOf, boolean[] seen) {
        for (int i : candidates.get(f)) {
            if (failureOf[i] < 0) {
                failureOf[i] = f;
                return true;
            }
        }
        for (int i : candidates.get(f)) {
            if (seen[i]) continue;
            seen[i] = true;
            if (assign(failureOf[i], candidates, failureOf, seen)) {
                failureOf[i] = f;
                return true;
            }
        }
        return false;
    }

    /** With nothing in flight, everything the server took for requests is back. */
    private static void assertAllGivenBack(ServerStats stats, String when) throws InterruptedException {
        // A reply reaches the client just before the server gives back what its request held: wait a moment.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (System.nanoTime() < deadline && (stats.requestsInFlight() != 0 || stats.inflightBytesInUse() != 0
                || stats.payloadBuffersOutstanding() != 0 || stats.payloadBytesHeld() != 0)) {
            Thread.sleep(10);
        }
        String now = gauges(stats);
        assertEquals(0, stats.requestsInFlight(), "requests in flight " + when + ": " + now);
        assertEquals(0, stats.inflightBytesInUse(), "in-flight budget in use " + when + ": " + now);
        assertEquals(0, stats.payloadBuffersOutstanding(), "payload buffers not given back " + when + ": " + now);
        assertEquals(0, stats.payloadBytesHeld(), "payload bytes held " + when + ": " + now);
        assertTrue(stats.payloadBuffersPooled() > 0, "the buffers are back in the pool " + when);
    }

    private static void servesAFreshClient(NbdServer server) throws IOException {
        try (NbdClient client = NbdClient.connect(server.uri())) {
            byte[] data = new byte[65536];
            new Random(7).nextBytes(data);
            client.write(ByteBuffer.wrap(data), 4096, true);
            client.flush();
            ByteBuffer back = ByteBuffer.allocate(data.length);
            assertEquals(data.length, client.read(back, 4096));
            assertArrayEquals(data, back.array(), "a fresh client reads back what it wrote");
            List<Extent> extents = client.extents(4096, data.length);
            assertEquals(4096, extents.get(0).offset());
        }
    }

    private long sent(String command) {
        AtomicLong n = sent.get(command);
        return n == null ? 0 : n.get();
    }

    /**
     * One request slot: sends a request in its own region of the export, checks the answer against its model of
     * the region, and sends the next, until the test stops.
     */
    private final class Slot {
        private final NbdClient client;
        private final long base;
        private final Random random;
        private final ExecutorService checkers;
        private final CountDownLatch finished;
        /** The region's bytes as they must read, where known. */
        private final byte[] expected = new byte[REGION];
        /** Per sector: true when expected holds its bytes (the sparse file starts as zeros). */
        private final boolean[] known = new boolean[SECTORS];

        Slot(NbdClient client, long base, Random random, ExecutorService checkers, CountDownLatch finished) {
            this.client = client;
            this.base = base;
            this.random = random;
            this.checkers = checkers;
            this.finished = finished;
            java.util.Arrays.fill(known, true);
        }

        void next() {
            if (stopping) {
                finished.countDown();
                return;
            }
            int first = random.nextInt(SECTORS);
            int count = 1 + random.nextInt(Math.min(MAX_SECTORS, SECTORS - first));
            long offset = base + (long) first * SECTOR;
            int length = count * SECTOR;
            int pick = random.nextInt(100);
            CompletableFuture<?> reply;
            Runnable onSuccess;
            String command;
            if (pick < 30) {
                command = "READ";
                ByteBuffer dst = ByteBuffer.allocateDirect(length);
                readRanges.add(offset + ":" + length);
                reply = client.readAsync(dst, offset);
                onSuccess = () -> checkRead(dst.flip(), first, count);
            } else if (pick < 60) {
                command = "WRITE";
                byte[] data = new byte[length];
                random.nextBytes(data);
                reply = client.writeAsync(ByteBuffer.wrap(data), offset, random.nextBoolean());
                onSuccess = () -> {
                    System.arraycopy(data, 0, expected, first * SECTOR, length);
                    java.util.Arrays.fill(known, first, first + count, true);
                };
            } else if (pick < 70) {
                command = "WRITE_ZEROES";
                reply = client.zeroAsync(offset, length, random.nextBoolean() ? ZeroFlag.NONE : ZeroFlag.TRIM);
                onSuccess = () -> {
                    java.util.Arrays.fill(expected, first * SECTOR, first * SECTOR + length, (byte) 0);
                    java.util.Arrays.fill(known, first, first + count, true);
                };
            } else if (pick < 80) {
                command = "TRIM";
                reply = client.trimAsync(offset, length);
                onSuccess = () -> java.util.Arrays.fill(known, first, first + count, false);
            } else if (pick < 85) {
                command = "FLUSH";
                reply = client.flushAsync();
                onSuccess = () -> {};
            } else {
                command = "BLOCK_STATUS";
                CompletableFuture<List<Extent>> status = client.extentsAsync(offset, length);
                reply = status;
                onSuccess = () -> checkExtents(status.join(), offset);
            }
            sent.computeIfAbsent(command, k -> new AtomicLong()).incrementAndGet();
            reply.whenCompleteAsync((ignored, failure) -> {
                try {
                    if (failure == null) {
                        onSuccess.run();
                    } else {
                        failed(command, failure);
                    }
                } catch (Throwable e) {
                    problems.add(command + " in region " + base + ": " + e);
                }
                next();
            }, checkers);
        }

        private void failed(String command, Throwable failure) {
            Throwable cause = failure instanceof CompletionException && failure.getCause() != null
                    ? failure.getCause() : failure;
            if (!(cause instanceof NbdException)) {
                problems.add(command + " failed without an NBD error: " + cause);
                return;
            }
            NbdException e = (NbdException) cause;
            // The reply tells the operation, range and errno; the injection's own message stays in the server's log.
            String message = String.valueOf(e.getMessage());
            if (message.contains("injected") || !message.contains("(" + NbdException.errorName(e.error()) + "))")) {
                problems.add(command + " failed with a message that is not the server's reply text: " + message);
                return;
            }
            observed.add(new Observed(e.command(), e.offset(), e.length(), e.error()));
        }

        private void checkRead(ByteBuffer data, int first, int count) {
            for (int s = first; s < first + count; s++) {
                if (!known[s]) continue;
                for (int i = 0; i < SECTOR; i++) {
                    byte got = data.get((s - first) * SECTOR + i);
                    byte want = expected[s * SECTOR + i];
                    if (got != want) {
                        problems.add(String.format(Locale.ROOT, "READ at %d: byte %d is %d, expected %d",
                                base + (long) first * SECTOR, (s - first) * SECTOR + i, got, want));
                        return;
                    }
                }
            }
        }

        /** Extents start at the offset and follow each other; a hole never covers bytes known to be non-zero. */
        private void checkExtents(List<Extent> extents, long offset) {
            long at = offset;
            for (Extent extent : extents) {
                if (extent.offset() != at || extent.length() <= 0) {
                    problems.add("BLOCK_STATUS at " + offset + ": extents not contiguous from it: " + extents);
                    return;
                }
                if (extent.hole()) {
                    long from = Math.max(extent.offset(), base) - base;
                    long to = Math.min(extent.end(), base + REGION) - base;
                    for (long i = from; i < to; i++) {
                        if (known[(int) (i / SECTOR)] && expected[(int) i] != 0) {
                            problems.add("BLOCK_STATUS at " + offset + " calls " + extent + " a hole, but byte "
                                    + (base + i) + " holds " + expected[(int) i]);
                            return;
                        }
                    }
                }
                at = extent.end();
            }
            if (extents.isEmpty()) problems.add("BLOCK_STATUS at " + offset + ": no extents");
        }
    }
}

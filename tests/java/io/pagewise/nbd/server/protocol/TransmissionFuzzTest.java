package io.pagewise.nbd.server.protocol;

import io.pagewise.nbd.server.metrics.RequestStats;
import io.pagewise.testing.FuzzSockets;
import io.pagewise.testing.ScriptedChannel;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.pagewise.backends.MemoryDevice;
import io.pagewise.filters.ReadOnlyFilter;
import io.pagewise.nbd.server.ExportEntry;
import io.pagewise.nbd.wire.Protocol;
import io.pagewise.nbd.wire.SocketIo;
import io.pagewise.testing.RecordingLogger;
import java.io.EOFException;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.net.StandardProtocolFamily;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Tag;

/**
 * The transmission phase fed arbitrary request bytes: the server's real {@link Transmission} (its RequestReader,
 * checks, RequestExecutor and ReplyEncoder) on one end of a Unix socket, over a 1 MiB {@link MemoryDevice}, with a
 * connection share of 128 KiB so that WRITEs and READs over 64 KiB take the piece-by-piece path. The input's first
 * byte picks what the handshake settled (bit 0: structured replies, bit 1: base:allocation, bit 2: read-only, bit 3:
 * extended headers, which reply in chunks whatever bit 0 says); the rest is what the client sends, followed by end of
 * stream.
 *
 * <p>Invariants: serving ends (a watchdog fails the input after 10 s); it fails only with a {@link ProtocolViolation}
 * or an {@link EOFException}; every request read is answered; every payload buffer taken is given back; a request
 * that passed the checks never fails on a MemoryDevice (the executor would log it as failed); and every reply is
 * checked against its request by {@link ExpectedReplies}: magic, cookie, error, chunk flags, types and lengths, a
 * READ's data against what the input wrote before it, and nothing after the last reply. Seeds:
 * tests/resources/io/pagewise/nbd/server/TransmissionFuzzTestInputs/serve/.
 */
@Tag("fuzz")
class TransmissionFuzzTest {
    private static final int EXPORT_SIZE = 1 << 20;
    private static final long BUDGET = 4 << 20;
    private static final long CONNECTION_SHARE = 128 << 10;
    private static final ExportEntry WRITABLE = new ExportEntry("", "", new MemoryDevice(EXPORT_SIZE));
    private static final ExportEntry READ_ONLY = new ExportEntry("", "", new ReadOnlyFilter(new MemoryDevice(EXPORT_SIZE)));
    private static final ExecutorService CLIENT = Executors.newCachedThreadPool(r -> daemon(r, "fuzz-client"));
    private static final ScheduledExecutorService WATCHDOG =
            Executors.newSingleThreadScheduledExecutor(r -> daemon(r, "fuzz-watchdog"));
    private static final ServerSocketChannel LISTENER = FuzzSockets.listen("server.sock");

    @FuzzTest
    void serve(byte[] input) throws Exception {
        if (input.length == 0) return;
        boolean extended = (input[0] & 8) != 0;
        boolean structured = (input[0] & 1) != 0 || extended;
        boolean allocation = structured && (input[0] & 2) != 0;
        ExportEntry entry = (input[0] & 4) != 0 ? READ_ONLY : WRITABLE;
        ByteBuffer requests = ByteBuffer.wrap(input, 1, input.length - 1);

        Counters counters = new Counters();
        RecordingLogger log = new RecordingLogger(null, Level.WARNING);
        ServerContext context = new ServerContext(1, new ByteBudget(BUDGET), CONNECTION_SHARE,
                new PayloadBuffers(BUDGET, counters), counters, log, Protocol.MAX_PAYLOAD,
                PayloadBuffers.longestWithin(CONNECTION_SHARE, Protocol.MAX_PAYLOAD));
        Session session = new Session(entry, EXPORT_SIZE, Handshake.transmissionFlags(entry.device(), structured),
                structured, allocation, extended);
        byte[] contents = new byte[EXPORT_SIZE];
        entry.device().readFully(ByteBuffer.wrap(contents), 0);
        ExpectedReplies replyCheck = new ExpectedReplies(requests, session.transmissionFlags(), structured, allocation,
                contents, extended);

        try (SocketChannel client = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            client.connect(LISTENER.getLocalAddress());
            try (SocketChannel server = LISTENER.accept()) {
                Future<?> sending = CLIENT.submit(() -> {
                    SocketIo.writeFully(client, requests);
                    client.shutdownOutput();
                    return null;
                });
                Future<Long> replies = CLIENT.submit(() -> replyCheck.check(client));
                Thread serving = Thread.currentThread();
                AtomicBoolean hung = new AtomicBoolean();
                ScheduledFuture<?> watchdog = WATCHDOG.schedule(() -> {
                    hung.set(true);
                    serving.interrupt();
                    closeQuietly(server);
                }, 10, TimeUnit.SECONDS);
                try {
                    new Transmission(server, session, "fuzz", context).serve();
                } catch (ProtocolViolation | EOFException expected) {
                    // the documented ways a client's bytes end a connection
                } catch (IOException e) {
                    if (!hung.get()) throw new AssertionError("undocumented failure: " + e, e);
                } finally {
                    watchdog.cancel(false);
                    Thread.interrupted();
                }
                assertFalse(hung.get(), "serving did not end within 10 s of the client's end of stream");
                server.close();
                try {
                    replies.get(10, TimeUnit.SECONDS);
                } catch (java.util.concurrent.ExecutionException e) {
                    if (e.getCause() instanceof AssertionError) throw (AssertionError) e.getCause();
                    throw e;
                }
                try {
                    sending.get(10, TimeUnit.SECONDS);
                } catch (java.util.concurrent.ExecutionException e) {
                    // the server stopped reading after a protocol violation and closed: the rest cannot be sent
                }
            }
        }
        assertEquals(counters.received.get(), counters.answered.get(), "requests read but not answered");
        assertEquals(replyCheck.sent().size(), counters.received.get(), "requests the server read, against those sent");
        assertEquals(counters.taken.get(), counters.given.get(), "payload buffer bytes taken but not given back");
        for (RecordingLogger.Entry e : log.entries()) {
            assertTrue(e.level() == Level.WARNING && !e.message().contains(" failed: "),
                    "a checked request failed on a MemoryDevice, or worse: " + e.level() + " " + e.message());
        }
    }

    private static Thread daemon(Runnable r, String name) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        return t;
    }

    private static void closeQuietly(SocketChannel channel) {
        try {
            channel.close();
        } catch (IOException ignored) {
            // closing to unblock a hung server
        }
    }

    /** The engine's counters for one connection. */
    private static final class Counters implements RequestStats {
        final AtomicLong received = new AtomicLong();
        final AtomicLong answered = new AtomicLong();
        final AtomicLong taken = new AtomicLong();
        final AtomicLong given = new AtomicLong();

        @Override public void requestReceived() { received.incrementAndGet(); }
        @Override public void requestAnswered() { answered.incrementAndGet(); }
        @Override public void request(int command, long length, boolean failed) {}
        @Override public void payloadBuffersTaken(long bytes) { taken.addAndGet(bytes); }
        @Override public void payloadBuffersGiven(long bytes) { given.addAndGet(bytes); }
    }
}

package io.pagewise.nbd;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.CacheMode;
import io.pagewise.device.BlockDevice;
import io.pagewise.nbd.server.NbdServer;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * What no well-behaved client sends, spoken on raw sockets: the server answers or drops that one connection, logs
 * it once, never allocates what a header claims, and keeps serving everyone else.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class BadInputTest {
    private static final long IHAVEOPT = 0x49484156454F5054L;
    private static final int SIZE = 8 << 20;

    @TempDir
    Path dir;
    private TestServer server;

    private TestServer server(java.util.function.Consumer<NbdServer.Builder> configure) throws IOException {
        server = TestServer.start(dir, SIZE, CacheMode.WRITEBACK, false, configure);
        return server;
    }

    @AfterEach
    void stop() throws IOException {
        if (server != null) server.close();
    }

    /** {@return a raw client in transmission on a server of the default export} */
    private Client clientInTransmission() throws IOException {
        server(null);
        return new Client().transmitting();
    }

    /** A raw client: handshake helpers and simple-reply transmission. */
    private final class Client implements AutoCloseable {
        final SocketChannel channel;

        Client() throws IOException {
            channel = server.connect();
        }

        Client greeted(int clientFlags) throws IOException {
            ByteBuffer greeting = read(18);
            assertEquals(0x4e42444d41474943L, greeting.getLong());
            assertEquals(IHAVEOPT, greeting.getLong());
            assertEquals(3, greeting.getShort());
            write(ByteBuffer.allocate(4).putInt(clientFlags).flip());
            return this;
        }

        void option(int code, int length, byte[] data) throws IOException {
            write(ByteBuffer.allocate(16).putLong(IHAVEOPT).putInt(code).putInt(length).flip());
            if (data != null) write(ByteBuffer.wrap(data));
        }

        /** Reads one option reply; returns its type. */
        int optionReply(int code) throws IOException {
            ByteBuffer head = read(20);
            assertEquals(0x3e889045565a9L, head.getLong());
            assertEquals(code, head.getInt());
            int type = head.getInt();
            read(head.getInt());
            return type;
        }

        /** Enters transmission with EXPORT_NAME "" (client said NO_ZEROES): simple replies. */
        Client transmitting() throws IOException {
            return transmitting("", SIZE);
        }

        /** Enters transmission with EXPORT_NAME name, whose size is size. */
        Client transmitting(String name, long size) throws IOException {
            greeted(3);
            byte[] bytes = name.getBytes(StandardCharsets.UTF_8);
            option(1, bytes.length, bytes);
            ByteBuffer reply = read(10);
            assertEquals(size, reply.getLong());
            return this;
        }

        /** Sends GO for the export "" and reads the replies up to the last; returns its type (ACK is 1). */
        int go() throws IOException {
            option(7, 6, new byte[6]);
            int type;
            do {
                type = optionReply(7);
            } while (type == 3);                                  // NBD_REP_INFO, then ACK or an error
            return type;
        }

        /** Reads one option reply and returns its message, when it is an error. */
        String optionError(int code) throws IOException {
            ByteBuffer head = read(20);
            assertEquals(0x3e889045565a9L, head.getLong());
            assertEquals(code, head.getInt());
            int type = head.getInt();
            assertTrue(type < 0, "not an error reply: " + type);
            return StandardCharsets.UTF_8.decode(read(head.getInt())).toString();
        }

        void request(int flags, int type, long cookie, long offset, int length) throws IOException {
            write(ByteBuffer.allocate(28).putInt(0x25609513).putShort((short) flags).putShort((short) type)
                    .putLong(cookie).putLong(offset).putInt(length).flip());
        }

        /** Sends a request without payload and reads its simple reply; returns its error. */
        int ask(int flags, int type, long cookie, long offset, int length) throws IOException {
            request(flags, type, cookie, offset, length);
            return reply(cookie);
        }

        /** Reads a simple reply for cookie; returns its error. */
        int reply(long cookie) throws IOException {
            ByteBuffer reply = read(16);
            assertEquals(0x67446698, reply.getInt());
            int error = reply.getInt();
            assertEquals(cookie, reply.getLong());
            return error;
        }

        byte[] readAt(long offset, int length) throws IOException {
            request(0, 0, 77, offset, length);
            assertEquals(0, reply(77));
            return read(length).array();
        }

        void writeAt(long offset, byte[] data) throws IOException {
            request(0, 1, 78, offset, data.length);
            write(ByteBuffer.wrap(data));
            assertEquals(0, reply(78));
        }

        ByteBuffer read(int n) throws IOException {
            ByteBuffer buffer = ByteBuffer.allocate(n);
            while (buffer.hasRemaining()) {
                if (channel.read(buffer) < 0) throw new java.io.EOFException("server closed after " + buffer.position() + " of " + n);
            }
            return buffer.flip();
        }

        void write(ByteBuffer buffer) throws IOException {
            while (buffer.hasRemaining()) channel.write(buffer);
        }

        /** True when the server closed the connection, maybe after its greeting: end of stream within 18 bytes. */
        boolean closedAfterGreeting() throws IOException {
            ByteBuffer greeting = ByteBuffer.allocate(19);
            try {
                while (channel.read(greeting) >= 0) {
                    if (!greeting.hasRemaining()) return false;
                }
                return true;
            } catch (IOException e) {
                return true; // reset
            }
        }

        /** True when the server has closed the connection (read sees end of stream). */
        boolean closedByServer() throws IOException {
            ByteBuffer one = ByteBuffer.allocate(1);
            try {
                return channel.read(one) < 0;
            } catch (IOException e) {
                return true; // reset
            }
        }

        @Override
        public void close() throws IOException {
            channel.close();
        }
    }

    /** The server's WARNING lines that contain text: client misbehaviour is logged at that level. */
    private long warnings(String text) {
        return server.log.messages(System.Logger.Level.WARNING, text).size();
    }

    @Test
    void wrongOptionMagicDropsOnlyThatConnectionAndIsLoggedOnce() throws Exception {
        server(null);
        try (Client good = new Client().transmitting(); Client bad = new Client().greeted(3)) {
            bad.write(ByteBuffer.allocate(16).putLong(0x1234567812345678L).putInt(7).putInt(0).flip());
            assertTrue(bad.closedByServer());
            assertEquals(1, warnings("bad option magic"));
            assertEquals(1, server.server.stats().protocolErrors());
            good.writeAt(0, "still here".getBytes(StandardCharsets.US_ASCII));
            assertArrayEquals("still here".getBytes(StandardCharsets.US_ASCII), good.readAt(0, 10));
        }
    }

    @Test
    void aFloodOfBadClientsIsCountedInFullButLoggedAtMostOnceASecond() throws Exception {
        server(null);
        long start = System.nanoTime();
        int flood = 30;
        for (int i = 0; i < flood; i++) {
            try (Client bad = new Client().greeted(3)) {
                bad.write(ByteBuffer.allocate(16).putLong(0x1234567812345678L).putInt(7).putInt(0).flip());
                assertTrue(bad.closedByServer());
            }
        }
        long seconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start);
        assertTrue(warnings("bad option magic") <= seconds + 1, warnings("bad option magic") + " lines in " + seconds + " s");
        assertEquals(flood, server.server.stats().protocolErrors());
        Thread.sleep(1100);
        try (Client bad = new Client().greeted(3)) {
            bad.write(ByteBuffer.allocate(16).putLong(0x1234567812345678L).putInt(7).putInt(0).flip());
            assertTrue(bad.closedByServer());
        }
        // The next line that gets through says how many were held back.
        assertEquals(1, warnings("more dropped for protocol errors since the last such message"),
                server.log.entries().toString());
    }

    @Test
    void messagesHeldBackWhenTheServerStopsAreCountedInTheLog() throws Exception {
        server(null);
        for (int i = 0; i < 5; i++) {
            try (Client bad = new Client().greeted(3)) {
                bad.write(ByteBuffer.allocate(16).putLong(0x1234567812345678L).putInt(7).putInt(0).flip());
                assertTrue(bad.closedByServer());
            }
        }
        // Five connections within the throttle's second: the first is logged, four are held back.
        assertEquals(1, warnings("bad option magic"), server.log.entries().toString());
        server.server.close();
        List<String> counts = server.log.messages(System.Logger.Level.WARNING, "more dropped for protocol errors since");
        assertEquals(List.of("4 more dropped for protocol errors since the last such message, not logged one by one"),
                counts, server.log.entries().toString());
    }

    /**
     * A client that stops reading its replies is cut after --reply-timeout, which gives back the in-flight bytes its
     * unsent replies held; one that reads slowly (but more than a write chunk, 1 MiB, per timeout) is not.
     */
    @Test
    void aClientThatStopsReadingRepliesIsCutAfterTheReplyTimeoutAndASlowReaderIsNot() throws Exception {
        server(b -> b.replyTimeout(java.time.Duration.ofSeconds(1)));
        try (Client stuck = new Client().transmitting(); Client slow = new Client().transmitting()) {
            for (int i = 0; i < 16; i++) stuck.request(0, 0, i, 0, 1 << 20); // 16 MiB of replies, none read
            for (int i = 0; i < 16; i++) slow.request(0, 0, 100 + i, 0, 1 << 20);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            ByteBuffer sip = ByteBuffer.allocate(64 << 10);
            long slowRead = 0;
            while (server.server.stats().replyTimeouts() == 0 && System.nanoTime() < deadline) {
                // The slow reader takes 64 KiB every 20 ms, a 1 MiB reply in a third of the timeout: not to be cut.
                int n = slow.channel.read(sip.clear());
                assertTrue(n >= 0, "the slow reader was cut");
                slowRead += n;
                Thread.sleep(20);
            }
            assertEquals(1, server.server.stats().replyTimeouts(), server.log.entries().toString());
            assertTrue(stuck.closedByServer() || drainsToEnd(stuck), "the stuck client's connection is closed");
            assertEquals(1, warnings("cut: a reply unread for 1 s (--reply-timeout)"), server.log.entries().toString());
            // The slow reader reads the rest of its 16 replies, nothing cut short.
            long total = 16L * (16 + (1 << 20));
            ByteBuffer rest = ByteBuffer.allocate(1 << 20);
            while (slowRead < total) {
                int n = slow.channel.read(rest.clear());
                assertTrue(n > 0, "the slow reader's replies ended after " + slowRead + " of " + total + " bytes");
                slowRead += n;
            }
        }
    }

    /** Reads what the server sent before it closed; true when the stream then ends (or is reset). */
    private static boolean drainsToEnd(Client client) {
        ByteBuffer sink = ByteBuffer.allocate(1 << 20);
        try {
            while (client.channel.read(sink.clear()) >= 0) {
                // what was in the socket's buffer before the cut
            }
            return true;
        } catch (IOException e) {
            return true;
        }
    }

    @Test
    void anErrorEchoingALongExportNameStaysWithinTheProtocolsStringLimit() throws Exception {
        server(null);
        // 4096 bytes of two-byte characters: "no export named '...'" would be 4116 bytes; the cut must not split one.
        byte[] name = "\u00e9".repeat(2048).getBytes(StandardCharsets.UTF_8);
        try (Client client = new Client().greeted(3)) {
            client.option(7, 4 + name.length + 2, ByteBuffer.allocate(4 + name.length + 2).putInt(name.length).put(name)
                    .putShort((short) 0).array());
            ByteBuffer head = client.read(20);
            assertEquals(0x3e889045565a9L, head.getLong());
            assertEquals(7, head.getInt());
            assertEquals(0x80000000 | 6, head.getInt(), "NBD_REP_ERR_UNKNOWN");
            int length = head.getInt();
            assertTrue(length <= 4096, "error string of " + length + " bytes");
            byte[] message = new byte[length];
            client.read(length).get(message);
            java.nio.charset.CharsetDecoder strict = StandardCharsets.UTF_8.newDecoder();
            String text = strict.decode(ByteBuffer.wrap(message)).toString(); // throws on a split character
            assertTrue(text.startsWith("no export named '\u00e9\u00e9"), text.substring(0, 40));
            client.option(3, 0, null); // the connection goes on
            assertEquals(2, client.optionReply(3));
        }
    }

    @Test
    void unknownClientFlagsDropTheConnection() throws Exception {
        server(null);
        try (Client bad = new Client().greeted(0x80 | 1)) {
            assertTrue(bad.closedByServer());
            assertEquals(1, warnings("unknown client flags"));
        }
    }

    @Test
    void oversizedOptionIsRefusedWithoutBeingKept() throws Exception {
        server(null);
        try (Client client = new Client().greeted(3)) {
            client.option(3, 1 << 20, new byte[1 << 20]); // LIST with 1 MiB of junk: read, dropped, refused
            assertEquals(0x80000000 | 9, client.optionReply(3));
            client.option(3, 0, null);                    // the handshake goes on
            assertEquals(2, client.optionReply(3));       // SERVER ""
            assertEquals(1, client.optionReply(3));       // ACK
        }
        try (Client client = new Client().greeted(3)) {
            client.option(6, 0xfffffff0, null);           // claims ~4 GiB: closed at once, nothing allocated
            assertTrue(client.closedByServer());
        }
    }

    @Test
    void unknownOptionsGetUnsupAndTheHandshakeGoesOn() throws Exception {
        server(null);
        try (Client client = new Client().greeted(3)) {
            client.option(99, 3, new byte[] {1, 2, 3});
            assertEquals(0x80000000 | 1, client.optionReply(99));
            client.option(5, 0, null);                    // STARTTLS: no TLS here
            assertEquals(0x80000000 | 1, client.optionReply(5));
            client.option(8, 4, new byte[4]);             // STRUCTURED_REPLY with data: invalid
            assertEquals(0x80000000 | 3, client.optionReply(8));
            client.option(2, 0, null);                    // ABORT
            assertEquals(1, client.optionReply(2));
            assertTrue(client.closedByServer());
        }
    }

    @Test
    void unknownCommandAndFlagsGetEinvalAndTheConnectionStaysUsable() throws Exception {
        try (Client client = clientInTransmission()) {
            assertEquals(22, client.ask(0, 42, 1, 0, 512));
            assertEquals(22, client.ask(1 << 9, 0, 2, 0, 512));
            assertEquals(22, client.ask(0, 7, 3, 0, 512)); // BLOCK_STATUS without a meta context
            client.writeAt(512, new byte[] {9, 9});
            assertArrayEquals(new byte[] {9, 9}, client.readAt(512, 2));
        }
    }

    @Test
    void requestsPastTheEndFailAndRefusedPayloadsAreConsumed() throws Exception {
        try (Client client = clientInTransmission()) {
            assertEquals(22, client.ask(0, 0, 1, SIZE - 100, 4096)); // READ past the end
            client.request(0, 1, 2, SIZE - 100, 4096);     // WRITE past the end, with its payload
            client.write(ByteBuffer.allocate(4096));
            assertEquals(28, client.reply(2));
            client.request(0, 1, 3, -4096L, 4096);        // offset near 2^64: no overflow
            client.write(ByteBuffer.allocate(4096));
            assertEquals(28, client.reply(3));
            int tooBig = io.pagewise.nbd.wire.Protocol.MAX_PAYLOAD + 1; // over the maximum block size
            client.request(0, 1, 4, 0, tooBig);
            client.write(ByteBuffer.allocate(tooBig));
            assertEquals(22, client.reply(4));
            client.writeAt(0, new byte[] {1, 2, 3});
            assertArrayEquals(new byte[] {1, 2, 3}, client.readAt(0, 3));
        }
    }

    /** A command number NBD does not define is answered EINVAL and counted apart from every command. */
    @Test
    void anUnknownCommandIsRefusedAndCounted() throws Exception {
        try (Client client = clientInTransmission()) {
            assertEquals(22, client.ask(0, 42, 1, 0, 0));
            client.writeAt(0, new byte[] {7, 8});   // in step: its reply is checked
        }
        io.pagewise.nbd.server.ServerStats stats = server.server.stats();
        assertEquals(1, stats.unknownCommands());
        assertEquals(1, stats.ops(NbdCommand.WRITE), "only the WRITE counts as a WRITE");
        assertEquals(0, stats.ops(NbdCommand.READ));
        for (NbdCommand command : NbdCommand.values()) {
            assertEquals(0, stats.errors(command), command + " errors");
        }
    }

    /** A device's maximum block size is advertised and kept: a longer READ or WRITE is refused, in step. */
    @Test
    void requestsOverTheDevicesMaximumAreRefused() throws Exception {
        io.pagewise.device.BlockDevice small = new io.pagewise.device.FilterDevice(
                new io.pagewise.backends.MemoryDevice(1 << 20)) {
            @Override public int maximumBlockSize() { return 65536; }
        };
        server(b -> b.export("small", small));
        try (Client client = new Client().transmitting("small", 1 << 20)) {
            assertEquals(22, client.ask(0, 0, 1, 0, 65536 + 4096)); // READ over the maximum
            client.request(0, 1, 2, 0, 65536 + 4096);    // WRITE over the maximum, with its payload
            client.write(ByteBuffer.allocate(65536 + 4096));
            assertEquals(22, client.reply(2));
            client.writeAt(0, new byte[] {4, 5, 6});
            assertArrayEquals(new byte[] {4, 5, 6}, client.readAt(0, 3), "the connection stayed in step");
        }
    }

    @Test
    void wrongRequestMagicClosesTheConnection() throws Exception {
        try (Client client = clientInTransmission()) {
            client.write(ByteBuffer.allocate(28).putInt(0, 0x12345678));
            assertTrue(client.closedByServer());
            assertEquals(1, warnings("bad request magic"));
        }
    }

    @Test
    void clientVanishingMidPayloadAppliesNothingAndOthersCarryOn() throws Exception {
        server(null);
        try (Client other = new Client().transmitting()) {
            try (Client vanishing = new Client().transmitting()) {
                vanishing.request(0, 1, 1, 1 << 20, 1 << 20);
                byte[] half = new byte[512 * 1024];
                java.util.Arrays.fill(half, (byte) 0x5a);
                vanishing.write(ByteBuffer.wrap(half));
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (server.server.connectionCount() > 1 && System.nanoTime() < deadline) Thread.sleep(10);
            assertEquals(1, server.server.connectionCount());
            assertArrayEquals(new byte[1 << 20], other.readAt(1 << 20, 1 << 20));
            byte[] onDisk = new byte[1 << 20];
            try (var raf = new java.io.RandomAccessFile(server.file.toFile(), "r")) {
                raf.seek(1 << 20);
                raf.readFully(onDisk);
            }
            assertArrayEquals(new byte[1 << 20], onDisk);
            assertEquals(0, server.server.stats().ops(NbdCommand.WRITE));
        }
    }

    @Test
    void aClientBeyondMaxConnectionsIsRefusedWhenItAsksToTransmitAndMayRetry() throws Exception {
        server(b -> b.maxConnections(2));
        try (Client one = new Client().transmitting(); Client two = new Client().transmitting();
             Client three = new Client().greeted(3); Client four = new Client().greeted(3)) {
            // Connections in the handshake do not count: three and four got their greeting.
            three.option(7, 6, new byte[6]);
            assertTrue(three.optionError(7).contains("all 2 transmission slots are taken (--max-connections)"));
            four.option(1, 0, null);                              // EXPORT_NAME has no error reply: closed
            assertTrue(four.closedByServer());
            assertEquals(2, server.server.stats().rejectedConnections());
            assertEquals(2, server.server.transmittingCount());
            one.close();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (server.server.transmittingCount() > 1 && System.nanoTime() < deadline) Thread.sleep(10);
            assertEquals(1, three.go());                          // the same connection, asking again, gets in
            three.writeAt(0, new byte[] {9, 8});
            assertArrayEquals(new byte[] {9, 8}, three.readAt(0, 2));
            assertEquals(1, warnings("refused entry to transmission"));   // the second within the same second is held back
        }
    }

    @Test
    void theOldestPendingHandshakeMakesRoomForANewOneAndTheDropsAreLoggedAtMostOnceASecond() throws Exception {
        server(b -> b.maxHandshakes(2));
        Client oldest = new Client();
        Client older = new Client();
        oldest.read(18);
        older.read(18);
        try (Client fresh = new Client()) {
            assertTrue(oldest.closedByServer());
            fresh.transmitting();
            assertEquals(1, server.server.stats().droppedHandshakes());
            java.util.List<Client> flood = new java.util.ArrayList<>();
            try {
                for (int i = 0; i < 50; i++) flood.add(new Client());
                assertTrue(older.closedByServer());
                // Two slots: the last two of the flood are pending, all others (and older) were dropped.
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (server.server.stats().droppedHandshakes() < 50 && System.nanoTime() < deadline) Thread.sleep(10);
                assertEquals(50, server.server.stats().droppedHandshakes());
                for (Client dropped : flood.subList(0, 48)) assertTrue(dropped.closedAfterGreeting());
                awaitConnectionCount(3);
                fresh.writeAt(0, new byte[] {1});                 // transmission is untouched by the drops
            } finally {
                for (Client c : flood) c.close();
            }
            long logged = warnings("to make room for a new one: 2 handshakes pending (--max-handshakes)");
            assertTrue(logged >= 1 && logged < 50, logged + " lines for 50 drops");
        } finally {
            oldest.close();
            older.close();
        }
    }

    /**
     * At the smallest budget allowed, a client that sends 64 READs and never reads a reply holds its quarter and no
     * more: another client is still served. Below 256K a quarter was rounded up to one 64K payload buffer, and at 64K
     * that was the whole budget.
     */
    @Test
    void aClientThatStopsReadingLeavesTheSmallestBudgetToOthers() throws Exception {
        server(b -> b.maxInflightBytes(256 * 1024).threads(2));
        try (Client stalled = new Client().transmitting(); Client other = new Client().transmitting()) {
            for (int i = 0; i < 64; i++) stalled.request(0, 0, 500 + i, (long) i * 65536, 65536);
            Thread.sleep(300); // the server reads what it can of those, and its replies fill the socket
            assertTimeoutPreemptively(java.time.Duration.ofSeconds(10), () -> other.readAt(0, 4096),
                    "a 4 KiB read while another client holds replies unread");
        }
        assertThrows(IllegalArgumentException.class, () -> NbdServer.builder().maxInflightBytes(128 * 1024));
    }

    @Test
    void aSmallInflightBudgetSlowsAPipelineButLosesNothing() throws Exception {
        server(b -> b.maxInflightBytes(256 * 1024).threads(2));
        try (Client client = new Client().transmitting()) {
            int n = 24;
            int length = 256 * 1024;
            // Pipeline everything first: the reader must stop and resume as the budget frees up.
            Thread writer = new Thread(() -> {
                try {
                    for (int i = 0; i < n; i++) {
                        client.request(0, 1, 1000 + i, (long) i * length, length);
                        byte[] data = new byte[length];
                        java.util.Arrays.fill(data, (byte) i);
                        client.write(ByteBuffer.wrap(data));
                    }
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
            writer.start();
            java.util.Set<Long> cookies = new java.util.HashSet<>();
            for (int i = 0; i < n; i++) {
                ByteBuffer reply = client.read(16);
                assertEquals(0x67446698, reply.getInt());
                assertEquals(0, reply.getInt());
                cookies.add(reply.getLong());
            }
            writer.join();
            assertEquals(n, cookies.size());
            byte[] last = client.readAt((long) (n - 1) * length, length);
            assertEquals((byte) (n - 1), last[length - 1]);
        }
    }

    @Test
    void discFinishesInFlightRequestsThenCloses() throws Exception {
        try (Client client = clientInTransmission()) {
            client.request(0, 1, 5, 4096, 4096);
            client.write(ByteBuffer.wrap(new byte[4096]).put(0, (byte) 7));
            client.request(0, 2, 6, 0, 0);                 // DISC right behind the write
            assertEquals(0, client.reply(5));
            assertTrue(client.closedByServer());
        }
        assertEquals(7, Files.readAllBytes(server.file)[4096]);
    }

    /** Sends count READs of length bytes and never reads a reply: its replies pile up on the server. */
    private Client stuckReader(int count, int length) throws IOException {
        Client stuck = new Client().transmitting();
        for (int i = 0; i < count; i++) stuck.request(0, 0, 5000 + i, (long) i * length % SIZE, length);
        return stuck;
    }

    /** Waits until the other client's pipeline has had time to fill the server's workers and buffers. */
    private static void letItJam() throws InterruptedException {
        Thread.sleep(500);
    }

    /** What another client does while a stuck reader jams the server. */
    private interface BesideTheStuckReader {
        void run(Client other) throws Exception;
    }

    /** Runs another client's part once a stuck reader (64 READs of 1 MiB) has had time to jam the server. */
    private void besideAStuckReader(BesideTheStuckReader part) throws Exception {
        try (Client stuck = stuckReader(64, 1 << 20); Client other = new Client().transmitting()) {
            letItJam();
            part.run(other);
        }
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void aClientThatStopsReadingRepliesDoesNotStarveTheWorkers() throws Exception {
        server(b -> b.threads(2).maxInflightBytes(1L << 30));
        besideAStuckReader(other -> {
            long started = System.nanoTime();
            for (int i = 0; i < 20; i++) {
                byte[] data = new byte[64 * 1024];
                java.util.Arrays.fill(data, (byte) i);
                other.writeAt((long) i * data.length, data);
                assertArrayEquals(data, other.readAt((long) i * data.length, data.length));
            }
            assertTrue(System.nanoTime() - started < TimeUnit.SECONDS.toNanos(5), "the other client was slowed down");
            long closing = System.nanoTime();
            server.server.close();
            assertTrue(System.nanoTime() - closing < TimeUnit.SECONDS.toNanos(20), "close waited for the stuck client");
            assertTrue(server.server.isStopped());
        });
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void aClientThatStopsReadingHoldsOnlyItsShareOfTheInflightBudget() throws Exception {
        // 8 threads x 1 MiB reads would hold twice the 4 MiB budget; the per-connection cap (a quarter) leaves 3 MiB.
        server(b -> b.threads(8).maxInflightBytes(4L << 20));
        besideAStuckReader(other -> {
            byte[] data = new byte[1 << 20];
            java.util.Arrays.fill(data, (byte) 0x3c);
            assertTimeoutPreemptively(java.time.Duration.ofSeconds(10), () -> {
                other.writeAt(0, data);
                assertArrayEquals(data, other.readAt(0, data.length));
            }, "the stuck client holds the whole in-flight budget");
        });
    }

    private void awaitConnectionCount(int count) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (server.server.connectionCount() != count && System.nanoTime() < deadline) Thread.sleep(10);
        assertEquals(count, server.server.connectionCount());
    }

    @Test
    void aSilentClientIsDroppedAfterTheHandshakeTimeoutAndFreesItsSlot() throws Exception {
        server(b -> b.maxHandshakes(1).handshakeTimeout(java.time.Duration.ofMillis(300)));
        try (Client silent = new Client()) {
            long started = System.nanoTime();
            silent.read(18);                                      // the greeting, then nothing from the client
            assertTrue(silent.closedByServer());
            assertTrue(System.nanoTime() - started < TimeUnit.SECONDS.toNanos(5));
            awaitConnectionCount(0);
            try (Client next = new Client().transmitting()) {
                Thread.sleep(600);                                // past the timeout: transmission is not limited
                next.writeAt(0, new byte[] {4, 5, 6});
                assertArrayEquals(new byte[] {4, 5, 6}, next.readAt(0, 3));
            }
            assertEquals(1, warnings("handshake not finished within 300 ms"));
            assertEquals(1, server.server.stats().handshakeTimeouts());
        }
    }

    @Test
    void aClientStallingMidHandshakeIsDropped() throws Exception {
        server(b -> b.handshakeTimeout(java.time.Duration.ofMillis(300)));
        try (Client stalling = new Client().greeted(3)) {
            stalling.option(3, 0, null);                          // LIST is answered...
            assertEquals(2, stalling.optionReply(3));
            assertEquals(1, stalling.optionReply(3));
            stalling.write(ByteBuffer.allocate(8).putLong(IHAVEOPT).flip()); // ...then half an option header
            assertTrue(stalling.closedByServer());
            awaitConnectionCount(0);
            assertEquals(1, warnings("handshake not finished"));
        }
    }

    /** An export whose READs take a second: a request that is in flight for longer than a short idle timeout. */
    private static final class SlowExport implements BlockDevice {
        @Override
        public long size() {
            return SIZE;
        }

        @Override
        public void readFully(ByteBuffer dst, long offset) throws IOException {
            try {
                Thread.sleep(1000);
            } catch (InterruptedException e) {
                throw new java.io.InterruptedIOException();
            }
            dst.position(dst.limit());
        }

        @Override
        public void close() {}
    }

    @Test
    @Timeout(value = 20, unit = TimeUnit.SECONDS)
    void anIdleClientInTransmissionIsClosedAfterTheIdleTimeout() throws Exception {
        server(b -> b.idleTimeout(java.time.Duration.ofMillis(300)));
        try (Client idle = new Client().transmitting(); Client busy = new Client().transmitting()) {
            long started = System.nanoTime();
            // busy keeps sending within the timeout: each request resets its clock
            while (System.nanoTime() - started < TimeUnit.MILLISECONDS.toNanos(900)) {
                busy.writeAt(0, new byte[] {1});
                Thread.sleep(100);
            }
            assertTrue(idle.closedByServer());
            assertArrayEquals(new byte[] {1}, busy.readAt(0, 1));
            assertEquals(1, server.server.stats().idleTimeouts());
            assertEquals(1, server.log.messages(System.Logger.Level.INFO, "closed after 300 ms without requests (--idle-timeout)").size(),
                    server.log.entries().toString());
            awaitConnectionCount(1);
        }
    }

    @Test
    @Timeout(value = 20, unit = TimeUnit.SECONDS)
    void aRequestInFlightIsNotCutByTheIdleTimeout() throws Exception {
        server(b -> b.idleTimeout(java.time.Duration.ofMillis(200)).export("slow", new SlowExport()));
        try (Client client = new Client().transmitting("slow", SIZE)) {
            client.request(0, 0, 41, 0, 4096);                    // a READ that takes a second, five timeouts
            assertEquals(0, client.reply(41));
            assertEquals(4096, client.read(4096).remaining());
            assertEquals(0, server.server.stats().idleTimeouts());
            assertTrue(client.closedByServer());                  // and once it is answered, the clock runs again
            assertEquals(1, server.server.stats().idleTimeouts());
        }
    }

    @Test
    @Timeout(value = 20, unit = TimeUnit.SECONDS)
    void aClientThatDoesNotReadItsRepliesIsNotIdle() throws Exception {
        server(b -> b.idleTimeout(java.time.Duration.ofMillis(200)));
        try (Client stuck = stuckReader(32, 1 << 20)) {
            Thread.sleep(1000);                                   // replies wait to be sent: requests are in flight
            for (int i = 0; i < 32; i++) {
                ByteBuffer reply = stuck.read(16);
                assertEquals(0x67446698, reply.getInt());
                assertEquals(0, reply.getInt());
                stuck.read(1 << 20);
            }
            assertEquals(0, server.server.stats().idleTimeouts());
        }
    }

    @Test
    @Timeout(value = 20, unit = TimeUnit.SECONDS)
    void theShutdownGraceIsAnOption() throws Exception {
        server(b -> b.shutdownGrace(java.time.Duration.ofMillis(200)).threads(2));
        try (Client stuck = stuckReader(64, 1 << 20)) {
            letItJam();
            // 20 times the grace, and still under the 5 s default, which the test would otherwise wait out
            assertTimeoutPreemptively(java.time.Duration.ofSeconds(4), () -> server.server.close());
            assertEquals(1, warnings("cut at shutdown: replies still unsent after 200 ms"), server.log.entries().toString());
        }
    }
}

package io.pagewise.nbd;

import static io.pagewise.testing.TestData.random;
import static io.pagewise.testing.TestData.readToTheEnd;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.CacheMode;
import io.pagewise.backends.FileDevice;
import io.pagewise.backends.MemoryDevice;
import io.pagewise.device.BlockDevice;
import io.pagewise.device.Capabilities;
import io.pagewise.device.Capability;
import io.pagewise.device.DeviceException;
import io.pagewise.device.ZeroFlag;
import io.pagewise.nbd.client.NbdClient;
import io.pagewise.nbd.server.NbdServer;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * FileChannel's and AsynchronousFileChannel's buffer conventions in the NBD API: {@link BlockDevice} implementations and
 * {@link NbdClient} move positions by the bytes transferred (asynchronous requests when the server has replied),
 * {@link NbdClient#read} returns -1 at the end of the export, a closed client throws ClosedChannelException, and
 * the server answers EIO to an export that breaks the convention instead of sending stale bytes or hanging.
 */
@Timeout(60)
class BufferConventionsTest {
    private static final int SIZE = 1 << 20;

    @TempDir
    Path dir;

    @Test
    void exportsMoveThePositionByTheBytesTransferred() throws Exception {
        Path path = dir.resolve("export.img");
        Files.write(path, new byte[SIZE]);
        try (FileDevice file = FileDevice.open(path, CacheMode.WRITEBACK, java.nio.file.StandardOpenOption.READ, java.nio.file.StandardOpenOption.WRITE)) {
            for (BlockDevice export : new BlockDevice[] {file, new MemoryDevice(SIZE)}) {
                byte[] data = random(1, 5000);
                ByteBuffer src = ByteBuffer.wrap(data, 100, 4000);
                export.write(src, 8192, false);
                assertEquals(4100, src.position(), export + ": write moves the position to the limit");
                ByteBuffer dst = ByteBuffer.allocate(4100).position(100);
                export.readFully(dst, 8192);
                assertEquals(4100, dst.position(), export + ": readFully moves the position to the limit");
                assertArrayEquals(Arrays.copyOfRange(data, 100, 4100), Arrays.copyOfRange(dst.array(), 100, 4100));
            }
            // The file shrinks under the export, which keeps its size and reads zeros there.
            try (java.nio.channels.FileChannel channel = java.nio.channels.FileChannel.open(path,
                    java.nio.file.StandardOpenOption.WRITE)) {
                channel.truncate(SIZE - 4096);
            }
            ByteBuffer tail = ByteBuffer.allocateDirect(8192);
            file.readFully(tail, SIZE - 8192);
            assertEquals(8192, tail.position());
        }
    }

    @Test
    void clientReadAndWriteMoveThePositionAndReadReturnsMinusOneAtTheEnd() throws Exception {
        try (TestServer server = TestServer.start(dir, SIZE, CacheMode.WRITEBACK);
             NbdClient nbd = NbdClient.connect(server.uri())) {
            byte[] data = random(2, 8192);
            ByteBuffer src = ByteBuffer.wrap(data);
            nbd.write(src, SIZE - 8192, false);
            assertEquals(8192, src.position(), "write moves the position to the limit");

            ByteBuffer inside = ByteBuffer.allocateDirect(4096);
            assertEquals(4096, nbd.read(inside, SIZE - 8192));
            assertEquals(4096, inside.position(), "read moves the position by its count");

            ByteBuffer across = ByteBuffer.allocate(8192).position(10);
            assertEquals(4096, nbd.read(across, SIZE - 4096), "short only at the end of the export");
            assertEquals(10 + 4096, across.position());
            assertArrayEquals(Arrays.copyOfRange(data, 4096, 8192), Arrays.copyOfRange(across.array(), 10, 10 + 4096));

            for (long offset : new long[] {SIZE, SIZE + 1, Long.MAX_VALUE}) {
                ByteBuffer past = ByteBuffer.allocate(512);
                assertEquals(-1, nbd.read(past, offset), "at or past the end: -1, as FileChannel");
                assertEquals(0, past.position());
                assertEquals(-1, NbdClient.await(nbd.readAsync(past, offset)), "and the future completes with -1");
            }
            assertEquals(0, nbd.read(ByteBuffer.allocate(0), SIZE + 1), "no room: 0, as FileChannel");
            assertThrows(IllegalArgumentException.class, () -> nbd.read(ByteBuffer.allocate(1), -1));
        }
    }

    /** The FileChannel read loop, over a whole export: it ends, with every byte. */
    @Test
    void aReadLoopWrittenForFileChannelEnds() throws Exception {
        MemoryDevice export = new MemoryDevice(3 * 65536 + 100);
        byte[] data = random(3, (int) export.size());
        export.write(ByteBuffer.wrap(data), 0, false);
        try (NbdServer server = NbdServer.builder().export("", export).unixSocket(dir.resolve("s.sock"))
                .logger(new io.pagewise.testing.RecordingLogger(null, System.Logger.Level.INFO)).start();
             NbdClient nbd = NbdClient.connect(server.uri())) {
            byte[] read = assertTimeoutPreemptively(Duration.ofSeconds(10),
                    () -> readToTheEnd(nbd::read, 65536), "the loop did not see the end of the export");
            assertArrayEquals(data, read);
        }
    }

    /** As AsynchronousFileChannel: the position moves when the request completes, before its future does. */
    @Test
    void asyncRequestsMoveThePositionWhenTheServerHasReplied() throws Exception {
        CountDownLatch gate = new CountDownLatch(1);
        CountDownLatch inside = new CountDownLatch(2);
        HeldExport export = HeldExport.memory(SIZE, HeldExport.gate(inside, gate));
        try (NbdServer server = NbdServer.builder().export("", export).unixSocket(dir.resolve("s.sock"))
                .logger(new io.pagewise.testing.RecordingLogger(null, System.Logger.Level.INFO)).start();
             NbdClient nbd = NbdClient.connect(server.uri())) {
            ByteBuffer dst = ByteBuffer.allocateDirect(4096);
            ByteBuffer src = ByteBuffer.wrap(random(4, 4096));
            CompletableFuture<Integer> read = nbd.readAsync(dst, 0);
            CompletableFuture<Void> write = nbd.writeAsync(src, 8192, false);
            assertTrue(inside.await(10, TimeUnit.SECONDS), "both requests reach the export");
            assertFalse(read.isDone() || write.isDone());
            assertEquals(0, dst.position(), "the read's position stays while it is in flight");
            assertEquals(0, src.position(), "the write's position stays while it is in flight");
            gate.countDown();
            assertEquals(4096, read.thenApply(n -> dst.position()).get(10, TimeUnit.SECONDS),
                    "moved before the future completed");
            assertEquals(4096, NbdClient.await(read));
            assertEquals(4096, write.thenApply(ignored -> src.position()).get(10, TimeUnit.SECONDS));
        }
    }

    @Test
    void failedRequestsLeaveThePositionAlone() throws Exception {
        BlockDevice failing = new BlockDevice() {
            @Override public long size() { return SIZE; }

            @Override
            public void readFully(ByteBuffer dst, long offset) throws IOException {
                throw new DeviceException(DeviceException.EIO, "medium error");
            }

            @Override
            public void write(ByteBuffer src, long offset, boolean fua) throws IOException {
                throw new DeviceException(DeviceException.ENOSPC, "full");
            }

            @Override public Capabilities capabilities() { return Capabilities.of(Capability.WRITE); }
        };
        try (NbdServer server = NbdServer.builder().export("", failing).unixSocket(dir.resolve("s.sock"))
                .logger(new io.pagewise.testing.RecordingLogger(null, System.Logger.Level.INFO)).start();
             NbdClient nbd = NbdClient.connect(server.uri())) {
            ByteBuffer dst = ByteBuffer.allocate(4096);
            ByteBuffer src = ByteBuffer.allocate(4096);
            assertEquals(NbdException.EIO, assertThrows(NbdException.class, () -> nbd.read(dst, 0)).error());
            assertEquals(NbdException.ENOSPC, assertThrows(NbdException.class, () -> nbd.write(src, 0, false)).error());
            NbdException async = assertThrows(NbdException.class, () -> NbdClient.await(nbd.readAsync(dst, 0)));
            assertEquals(NbdException.EIO, async.error(), "the future fails with the server's error, unwrapped");
            CompletableFuture<Void> write = nbd.writeAsync(src, 0, false);
            assertTrue(write.handle((ok, e) -> e instanceof NbdException).get(10, TimeUnit.SECONDS),
                    "a dependent stage sees the NbdException itself");
            assertEquals(0, dst.position());
            assertEquals(0, src.position());
        }
    }

    @Test
    void aClosedClientThrowsClosedChannelException() throws Exception {
        try (TestServer server = TestServer.start(dir, SIZE, CacheMode.WRITEBACK)) {
            NbdClient nbd = NbdClient.connect(server.uri());
            nbd.close();
            ByteBuffer buffer = ByteBuffer.allocate(512);
            assertThrows(ClosedChannelException.class, () -> nbd.read(buffer, 0));
            assertThrows(ClosedChannelException.class, () -> NbdClient.await(nbd.readAsync(buffer, 0)));
            assertThrows(ClosedChannelException.class, () -> nbd.write(buffer, 0, false));
            assertThrows(ClosedChannelException.class, nbd::flush);
            assertThrows(ClosedChannelException.class, () -> nbd.trim(0, 512));
            assertThrows(ClosedChannelException.class, () -> nbd.zero(0, 512, ZeroFlag.TRIM));
            ClosedChannelException e = assertThrows(ClosedChannelException.class, () -> nbd.extents(0, 512));
            assertTrue(e.getMessage().contains(server.uri()), e.getMessage());
            assertEquals(0, buffer.position());
            nbd.close(); // closing again does nothing
        }
    }

    /** FileChannel refuses a read-only buffer up front; the client's reader thread would otherwise fail on it. */
    @Test
    void aReadOnlyBufferIsRefusedAndTheConnectionStaysUsable() throws Exception {
        try (TestServer server = TestServer.start(dir, SIZE, CacheMode.WRITEBACK);
             NbdClient nbd = NbdClient.connect(server.uri())) {
            assertThrows(IllegalArgumentException.class, () -> nbd.read(ByteBuffer.allocate(512).asReadOnlyBuffer(), 0));
            assertThrows(IllegalArgumentException.class,
                    () -> nbd.readAsync(ByteBuffer.allocateDirect(512).asReadOnlyBuffer(), 0));
            assertEquals(512, nbd.read(ByteBuffer.allocate(512), 0));
        }
    }

    /**
     * An export that fills or consumes the buffer without moving its position breaks the contract: the server
     * answers EIO (it cannot tell how much was transferred) and goes on serving, for a READ served whole, a READ
     * served in pieces (which once looped forever on it) and a WRITE.
     */
    @Test
    void theServerAnswersEioToAnExportThatLeavesThePositionBehind() throws Exception {
        MemoryDevice memory = new MemoryDevice(4 * SIZE);
        BlockDevice absolute = new BlockDevice() {
            @Override public long size() { return memory.size(); }

            @Override
            public void readFully(ByteBuffer dst, long offset) throws IOException {
                memory.readFully(dst.duplicate(), offset);
            }

            @Override
            public void write(ByteBuffer src, long offset, boolean fua) throws IOException {
                memory.write(src.duplicate(), offset, fua);
            }

            @Override public Capabilities capabilities() { return Capabilities.of(Capability.WRITE); }

            @Override public String toString() { return "absolute"; }
        };
        io.pagewise.testing.RecordingLogger log = new io.pagewise.testing.RecordingLogger(null, System.Logger.Level.DEBUG);
        try (NbdServer server = NbdServer.builder().export("", absolute).export("memory", memory)
                .maxInflightBytes(SIZE).unixSocket(dir.resolve("s.sock")).logger(log).start();
             NbdClient nbd = NbdClient.connect(server.uri(""));
             NbdClient good = NbdClient.connect(server.uri("memory"))) {
            for (int length : new int[] {4096, 2 * SIZE}) {
                NbdException read = assertThrows(NbdException.class, () -> nbd.read(ByteBuffer.allocate(length), 0),
                        "READ of " + length);
                assertEquals(NbdException.EIO, read.error());
                assertTrue(read.getMessage().contains("(read at 0 (+" + length + "): Input/output error (EIO))"),
                        read.getMessage());
            }
            NbdException write = assertThrows(NbdException.class, () -> nbd.write(ByteBuffer.allocate(4096), 0, false));
            assertEquals(NbdException.EIO, write.error());
            assertTrue(write.getMessage().contains("(write at 0 (+4096): Input/output error (EIO))"), write.getMessage());
            // What the device left behind is the server's business: its log says it.
            assertEquals(2, log.messages(System.Logger.Level.DEBUG, "BlockDevice.readFully").size(), log.entries().toString());
            assertEquals(1, log.messages(System.Logger.Level.DEBUG, "BlockDevice.write").size(), log.entries().toString());
            assertEquals(4096, good.read(ByteBuffer.allocate(4096), 0), "the server still serves");
        }
    }
}

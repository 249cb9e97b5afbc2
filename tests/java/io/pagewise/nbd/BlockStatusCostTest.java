package io.pagewise.nbd;

import static io.pagewise.nbd.wire.Protocol.CMD_BLOCK_STATUS;
import static io.pagewise.nbd.wire.Protocol.CMD_FLAG_REQ_ONE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.CacheMode;
import io.pagewise.Extent;
import io.pagewise.StorageFile;
import io.pagewise.backends.FileDevice;
import io.pagewise.device.BlockDevice;
import io.pagewise.device.Capabilities;
import io.pagewise.device.Capability;
import io.pagewise.nbd.client.ExportInfo;
import io.pagewise.nbd.client.NbdClient;
import io.pagewise.nbd.client.RawConnection;
import io.pagewise.nbd.server.NbdServer;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * BLOCK_STATUS costs what its reply carries, not the range it asks about: the server asks the export for at most
 * the runs one reply sends (one with REQ_ONE), a READ's hole lookup for at most its chunks, and a file export finds
 * them with a bounded number of SEEK_DATA/SEEK_HOLE calls. Observed through an export that counts every run it
 * hands out, so that an unbounded lookup shows as a count, not as a time.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class BlockStatusCostTest {
    private static final long GiB = 1L << 30;
    private static final int RUN = 4096;
    /** Descriptors in one of the server's BLOCK_STATUS replies. */
    private static final int REPLY_DESCRIPTORS = 256;

    @TempDir
    Path dir;

    /**
     * 4 GiB of alternating 4 KiB runs, data first: a million of them, none stored. Counts the runs it hands out, in
     * all its calls together.
     */
    private static final class AlternatingExport implements BlockDevice {
        final AtomicLong runsHandedOut = new AtomicLong();
        final AtomicInteger largestLimitAsked = new AtomicInteger();
        volatile CountDownLatch lookupStarted = new CountDownLatch(0);
        volatile CountDownLatch lookupMayFinish = new CountDownLatch(0);

        @Override
        public long size() {
            return 4 * GiB;
        }

        @Override
        public void readFully(ByteBuffer dst, long offset) {
            while (dst.hasRemaining()) {
                long at = offset + dst.position();
                dst.put((at / RUN) % 2 == 0 ? (byte) 0xab : 0);
            }
        }

        @Override
        public List<Extent> extents(long offset, long length, int maxExtents) throws IOException {
            largestLimitAsked.accumulateAndGet(maxExtents, Math::max);
            lookupStarted.countDown();
            try {
                if (!lookupMayFinish.await(20, TimeUnit.SECONDS)) throw new IOException("the test never let go");
            } catch (InterruptedException e) {
                throw new java.io.InterruptedIOException();
            }
            List<Extent> runs = new ArrayList<>();
            long end = Math.min(offset + length, size());
            for (long at = offset; at < end && runs.size() < maxExtents; ) {
                long next = Math.min(end, (at / RUN + 1) * RUN);
                runs.add(new Extent(at, next - at, (at / RUN) % 2 == 1));
                at = next;
            }
            runsHandedOut.addAndGet(runs.size());
            return runs;
        }

        @Override
        public Capabilities capabilities() {
            return Capabilities.of(Capability.EXTENTS, Capability.HOLES);
        }
    }

    /** One connection, negotiated by hand so that requests can carry any flags. */
    private static RawConnection connect(NbdServer server) throws IOException {
        RawConnection connection = RawConnection.negotiate(SocketChannel.open(server.address()), "test", "");
        assertTrue(connection.info().canExtents(), "base:allocation negotiated");
        return connection;
    }

    private static List<Extent> blockStatus(RawConnection connection, long offset, long length, int flags)
            throws Exception {
        return connection.blockStatus(CMD_BLOCK_STATUS, offset, length, flags);
    }

    /** The runs from offset are contiguous, alternate, and each ends where the export's 4 KiB runs end. */
    private static void assertAlternatingFrom(long offset, List<Extent> extents) {
        long at = offset;
        for (Extent e : extents) {
            assertEquals(at, e.offset(), "contiguous from " + offset + ": " + extents);
            assertEquals((at / RUN) % 2 == 1, e.hole(), "the run at " + at);
            assertEquals(Math.min((at / RUN + 1) * RUN, 4 * GiB) - at, e.length(), "the run at " + at);
            at = e.end();
        }
    }

    @Test
    void aWholeExportBlockStatusAsksTheExportForWhatOneReplyCarries() throws Exception {
        AlternatingExport export = new AlternatingExport();
        try (NbdServer server = NbdServer.builder().export("", export).unixSocket(dir.resolve("s.sock")).start();
             RawConnection connection = connect(server)) {
            long whole = 4 * GiB - RUN; // the longest request: lengths are 32 bits
            List<Extent> map = blockStatus(connection, 0, whole, 0);
            assertEquals(REPLY_DESCRIPTORS, map.size(), "one reply's worth of descriptors");
            assertAlternatingFrom(0, map);
            // Before, the server listed the whole range, a million runs, to send 256 of them.
            assertEquals(REPLY_DESCRIPTORS, export.runsHandedOut.get(), "runs the export was asked to list");

            // From inside a run, and the next request from where the reply ended: the client makes progress.
            long from = map.get(map.size() - 1).end() + 100;
            List<Extent> next = blockStatus(connection, from, whole - from, 0);
            assertEquals(REPLY_DESCRIPTORS, next.size());
            assertAlternatingFrom(from, next);
            assertEquals(2 * REPLY_DESCRIPTORS, export.runsHandedOut.get());

            List<Extent> one = blockStatus(connection, 3 * GiB + 10, GiB - RUN, CMD_FLAG_REQ_ONE);
            assertEquals(List.of(new Extent(3 * GiB + 10, RUN - 10, false)), one, "REQ_ONE: exactly one descriptor");
            assertEquals(2 * REPLY_DESCRIPTORS + 1, export.runsHandedOut.get(), "REQ_ONE asks the export for one run");
            assertEquals(REPLY_DESCRIPTORS, export.largestLimitAsked.get());
        }
    }

    @Test
    void aReadLooksUpOnlyTheHolesItsChunksCanCarry() throws Exception {
        AlternatingExport export = new AlternatingExport();
        try (NbdServer server = NbdServer.builder().export("", export).unixSocket(dir.resolve("s.sock")).start();
             NbdClient client = NbdClient.connect(server.uri())) {
            int length = 32 << 20; // 8192 runs
            ByteBuffer read = ByteBuffer.allocateDirect(length);
            assertEquals(length, client.read(read, GiB));
            read.flip();
            for (int i = 0; i < length; i += 1024) {
                assertEquals((i / RUN) % 2 == 0 ? (byte) 0xab : 0, read.get(i), "byte " + i + " of the READ");
            }
            assertTrue(export.runsHandedOut.get() <= 64, "a READ of 8192 runs had the export list "
                    + export.runsHandedOut.get() + " of them, more than one reply's chunks");
        }
    }

    @Test
    void aBlockStatusInFlightHoldsPartOfTheBudget() throws Exception {
        AlternatingExport export = new AlternatingExport();
        export.lookupStarted = new CountDownLatch(1);
        export.lookupMayFinish = new CountDownLatch(1);
        try (NbdServer server = NbdServer.builder().export("", export).unixSocket(dir.resolve("s.sock"))
                     .maxInflightBytes(1 << 20).start();
             RawConnection connection = connect(server)) {
            List<Extent> extents = new ArrayList<>();
            CompletableFuture<Void> reply = connection.blockStatusAsync(CMD_BLOCK_STATUS, 0, GiB, 0, extents);
            assertTrue(export.lookupStarted.await(20, TimeUnit.SECONDS), "the server looks up the extents");
            long held = server.stats().inflightBytesInUse();
            // Before, a BLOCK_STATUS took nothing from the budget however much it listed.
            assertTrue(held > 0 && held <= 32 * 1024, "a BLOCK_STATUS in flight holds " + held + " bytes of the budget");
            export.lookupMayFinish.countDown();
            reply.get(20, TimeUnit.SECONDS);
            assertEquals(REPLY_DESCRIPTORS, extents.size());
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (server.stats().inflightBytesInUse() != 0 && System.nanoTime() < deadline) Thread.sleep(10);
            assertEquals(0, server.stats().inflightBytesInUse(), "given back once answered");
        }
    }

    /** A file of size bytes whose every other 4 KiB block holds one byte: size / 4 KiB runs. */
    private Path alternatingFile(long size) throws IOException {
        Path file = dir.resolve("alternating.img");
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
            raf.setLength(size);
            for (long at = 0; at < size; at += 2 * RUN) {
                raf.seek(at);
                raf.write(1);
            }
        }
        return file;
    }

    @Test
    void aFileDeviceListsAtMostTheRunsAskedFor() throws Exception {
        long size = 64L << 20;
        Path path = alternatingFile(size);
        try (StorageFile file = StorageFile.open(path, CacheMode.WRITEBACK, StandardOpenOption.READ);
             FileDevice export = FileDevice.of(file)) {
            List<Extent> all = file.extents(0, size);
            assertEquals(size / RUN, all.size(), "every 4 KiB block its own run");
            assertEquals(all.subList(0, REPLY_DESCRIPTORS), export.extents(0, size, REPLY_DESCRIPTORS));
            assertEquals(all.subList(0, 1), file.extents(0, size, 1));
            assertEquals(List.of(new Extent(RUN + 5, RUN - 5, true), all.get(2)), file.extents(RUN + 5, size, 2),
                    "from inside a hole");
            assertEquals(all.subList(all.size() - 3, all.size()), file.extents(size - 3 * RUN, size, 100),
                    "fewer runs than asked for at the end");
            org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class, () -> file.extents(0, 1, 0));

            // Served whole-export, the reply is the first 256 runs of the file.
            try (NbdServer server = NbdServer.builder().export("", export).unixSocket(dir.resolve("f.sock")).start();
                 NbdClient client = NbdClient.connect(server.uri())) {
                assertEquals(all.subList(0, REPLY_DESCRIPTORS), client.extents(0, size));
                ByteBuffer back = ByteBuffer.allocate(3 * RUN);
                client.read(back, 0);
                assertEquals(1, back.get(0));
                assertEquals(1, back.get(2 * RUN));
                assertEquals(0, back.get(RUN));
            }
        }
    }
}

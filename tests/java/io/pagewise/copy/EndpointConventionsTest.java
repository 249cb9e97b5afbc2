package io.pagewise.copy;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.CacheMode;
import io.pagewise.Extent;
import io.pagewise.SystemCallFailure;
import io.pagewise.nbd.MemoryExport;
import io.pagewise.nbd.NbdServer;
import java.io.EOFException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The copy endpoints keep FileChannel's buffer convention: readFully and write move the position to the limit,
 * readFully throws EOFException at the end of the source; the Copier refuses an endpoint that does not.
 */
@Timeout(60)
class EndpointConventionsTest {
    private static final int SIZE = 1 << 20;

    @TempDir
    Path dir;

    @Test
    void everyEndpointMovesThePositionAndEndsWithEofException() throws Exception {
        byte[] data = new byte[SIZE];
        new Random(1).nextBytes(data);
        Path path = dir.resolve("source.img");
        Files.write(path, data);
        MemoryExport memory = new MemoryExport(SIZE, false);
        try (FileEndpoint file = FileEndpoint.openDestination(path, CacheMode.EVICT, SIZE);
             NbdServer server = NbdServer.builder().export("", memory).unixSocket(dir.resolve("s.sock"))
                     .logger(new io.pagewise.testing.RecordingLogger(null, System.Logger.Level.INFO)).start();
             NbdEndpoint nbd = NbdEndpoint.connect(server.uri(), 1)) {
            List<CopySource> sources = new ArrayList<>(List.of(file, nbd, SyntheticEndpoints.pattern(SIZE),
                    SyntheticEndpoints.zero(SIZE)));
            for (CopySource source : sources) {
                ByteBuffer dst = ByteBuffer.allocate(8192).position(100);
                source.readFully(dst, 4096);
                assertEquals(8192, dst.position(), source.name() + ": readFully moves the position to the limit");
                ByteBuffer across = ByteBuffer.allocate(8192);
                assertThrows(EOFException.class, () -> source.readFully(across, SIZE - 4096),
                        source.name() + ": the source ends inside the read");
                assertThrows(EOFException.class, () -> source.readFully(ByteBuffer.allocate(1), SIZE),
                        source.name() + ": at the end");
            }
            for (CopyDestination destination : List.of(file, nbd, SyntheticEndpoints.discard())) {
                ByteBuffer src = ByteBuffer.wrap(data, 10, 5000);
                destination.write(src, 8192);
                assertEquals(5010, src.position(), destination.name() + ": write moves the position to the limit");
            }
            ByteBuffer back = ByteBuffer.allocate(5000);
            nbd.readFully(back, 8192);
            assertArrayEquals(Arrays.copyOfRange(data, 10, 5010), back.array(), "NbdEndpoint wrote what it was given");
        }
    }

    /** A missing source is StorageFile's NoSuchFileException, with the errno, as everywhere else. */
    @Test
    void aMissingSourceIsNoSuchFileExceptionWithItsErrno() {
        Path missing = dir.resolve("missing.img");
        NoSuchFileException e = assertThrows(NoSuchFileException.class,
                () -> FileEndpoint.openSource(missing, CacheMode.EVICT));
        assertEquals("ENOENT", ((SystemCallFailure) e).errnoName());
        assertTrue(e.getMessage().contains(missing.toString()), e.getMessage());
    }

    /** A source that fills the buffer without moving its position must fail the copy, not copy stale bytes. */
    @Test
    void theCopierRefusesASourceThatLeavesThePositionBehind() {
        CopySource absolute = new CopySource() {
            @Override public String name() { return "absolute"; }
            @Override public long size() { return SIZE; }
            @Override public List<Extent> extents(long offset, long length) { return List.of(new Extent(offset, length, false)); }
            @Override public void readFully(ByteBuffer dst, long offset) {
                for (int i = dst.position(); i < dst.limit(); i++) dst.put(i, (byte) 1);
            }
        };
        CopyException e = assertThrows(CopyException.class,
                () -> new Copier(new CopyOptions()).copy(absolute, SyntheticEndpoints.discard()));
        assertTrue(e.getMessage().contains("CopySource.readFully"), e.getMessage());
    }

    @Test
    void theCopierRefusesADestinationThatLeavesThePositionBehind() {
        CopyDestination absolute = new CopyDestination() {
            @Override public String name() { return "absolute"; }
            @Override public long size() { return SIZE; }
            @Override public void write(ByteBuffer src, long offset) {}
            @Override public void zero(long offset, long length, boolean allocate) {}
            @Override public void flush() {}
        };
        CopyException e = assertThrows(CopyException.class,
                () -> new Copier(new CopyOptions()).copy(SyntheticEndpoints.pattern(SIZE), absolute));
        assertTrue(e.getMessage().contains("CopyDestination.write"), e.getMessage());
    }
}

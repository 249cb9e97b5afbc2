package io.pagewise.nbd;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.pagewise.CacheMode;
import io.pagewise.IoStats;
import io.pagewise.StorageFile;
import io.pagewise.testing.ExternalTools;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import io.pagewise.nbd.client.NbdClient;

/**
 * A request reaches the kernel whole, checked through what the file counts at its system calls ({@link IoStats}),
 * not by timing: a DONTCACHE READ of whole 2 MiB windows is one {@code RWF_DONTCACHE} read, and a FUA WRITE of
 * several MiB is made durable by {@code RWF_DSYNC} writes of its own, with no fdatasync of the file. Before
 * requests travelled whole, the server cut both into 256 KiB pieces: no read used RWF_DONTCACHE and the FUA write
 * became plain writes plus an fdatasync.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class WholeRequestsTest {
    private static final int MIB = 1 << 20;

    @TempDir
    Path dir;

    @Test
    void dontcacheReadOfWholeWindowsIsOneRwfDontcacheRead() throws IOException {
        ExternalTools.requireNativeLibrary();
        try (TestServer server = TestServer.start(dir, 16 * MIB, CacheMode.DONTCACHE)) {
            StorageFile file = server.export.file();
            if (file.cacheMode() != CacheMode.DONTCACHE) {
                ExternalTools.unavailable("RWF_DONTCACHE is not supported for " + dir + " on this kernel",
                        "CI's kernel and file system take RWF_DONTCACHE");
            }
            byte[] data = random(8 * MIB);
            try (NbdClient client = NbdClient.connect(server.uri())) {
                client.write(ByteBuffer.allocateDirect(data.length).put(data).flip(), 0, false);
                IoStats before = file.stats();
                ByteBuffer got = ByteBuffer.allocateDirect(4 * MIB);
                client.read(got, 2 * MIB);
                IoStats after = file.stats();
                assertEquals(1, after.dontcacheReads() - before.dontcacheReads(),
                        "the 4 MiB READ went to the kernel as one RWF_DONTCACHE read: " + after);
                assertEquals(4 * MIB, after.dontcacheBytesRead() - before.dontcacheBytesRead(), after.toString());
                assertEquals(1, after.reads() - before.reads(), "one StorageFile read for one request");
                byte[] bytes = new byte[4 * MIB];
                got.get(0, bytes);
                assertArrayEquals(java.util.Arrays.copyOfRange(data, 2 * MIB, 6 * MIB), bytes);
            }
        }
    }

    /** Every mode where FUA syncs: the FUA WRITE is one RWF_DSYNC write, and nothing syncs the whole file. */
    @ParameterizedTest
    @EnumSource(value = CacheMode.class, names = "UNSAFE", mode = EnumSource.Mode.EXCLUDE)
    void fuaWriteOfSeveralMiBIsOneDsyncWriteWithoutFileSync(CacheMode mode) throws IOException {
        ExternalTools.requireNativeLibrary(); // RWF_DSYNC needs it; the pure-Java path syncs the file instead
        try (TestServer server = TestServer.start(dir, 16 * MIB, mode)) {
            IoStats before = server.export.file().stats();
            byte[] data = random(6 * MIB);
            try (NbdClient client = NbdClient.connect(server.uri())) {
                client.write(ByteBuffer.allocateDirect(data.length).put(data).flip(), MIB, true);
                IoStats after = server.export.file().stats();
                assertEquals(1, after.dsyncWrites() - before.dsyncWrites(), "one RWF_DSYNC write: " + after);
                assertEquals(6 * MIB, after.dsyncBytesWritten() - before.dsyncBytesWritten(), after.toString());
                assertEquals(0, after.syncs() - before.syncs(), "FUA must not sync the whole file: " + after);
                assertEquals(0, after.flushes() - before.flushes(), after.toString());
                ByteBuffer got = ByteBuffer.allocateDirect(data.length);
                client.read(got, MIB);
                byte[] bytes = new byte[data.length];
                got.get(0, bytes);
                assertArrayEquals(data, bytes);
            }
        }
    }

    /**
     * A FUA WRITE longer than a connection's share of the in-flight budget is written one share at a time: each
     * part is an RWF_DSYNC write of its own, and still nothing syncs the whole file.
     */
    @Test
    void fuaWriteLongerThanAShareIsDurablePartByPart() throws IOException {
        ExternalTools.requireNativeLibrary();
        try (TestServer server = TestServer.start(dir, 16 * MIB, CacheMode.WRITEBACK, false,
                builder -> builder.maxInflightBytesPerConnection(MIB))) {
            IoStats before = server.export.file().stats();
            byte[] data = random(4 * MIB);
            try (NbdClient client = NbdClient.connect(server.uri())) {
                client.write(ByteBuffer.wrap(data), 0, true);
                IoStats after = server.export.file().stats();
                assertEquals(4, after.dsyncWrites() - before.dsyncWrites(), "one RWF_DSYNC write per 1 MiB share: " + after);
                assertEquals(4 * MIB, after.dsyncBytesWritten() - before.dsyncBytesWritten(), after.toString());
                assertEquals(0, after.syncs() - before.syncs(), "FUA must not sync the whole file: " + after);
                ByteBuffer got = ByteBuffer.allocate(data.length);
                client.read(got, 0);
                assertArrayEquals(data, got.array());
            }
        }
    }

    private static byte[] random(int size) {
        byte[] data = new byte[size];
        new Random(size).nextBytes(data);
        return data;
    }
}

package io.pagewise.lucene;

import io.pagewise.CacheMode;
import io.pagewise.StorageFile;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.apache.lucene.tests.util.LuceneTestCase;
import org.junit.Before;
import org.junit.BeforeClass;

/**
 * An output in a mode that waits for the disk writes its full buffers asynchronously: a write that fails
 * there must still fail the output, at its next write or at the latest at close, with the error of the write itself.
 * /dev/full answers every write with ENOSPC.
 */
public class TestAsyncWrites extends LuceneTestCase {
    @BeforeClass
    public static void announce() {
        TestLines.announce(TestAsyncWrites.class);
    }

    @Before
    public void needsNative() {
        PageCacheChecks.assumeNative(); // on the pure-Java path every output is WRITEBACK, written synchronously
    }

    public void testAFailedAsynchronousWriteFailsTheOutput() throws IOException {
        Path full = Path.of("/dev/full");
        assumeTrue("needs /dev/full", Files.isWritable(full));
        byte[] chunk = new byte[64 << 10];
        random().nextBytes(chunk);
        IOException failure = null;
        StorageFile file = StorageFile.open(full, CacheMode.EVICT, StandardOpenOption.WRITE);
        StorageIndexOutput output = new StorageIndexOutput("test", "_0.fdt", file,
                new IoTally().counter("fdt", ContextKind.MERGE));
        try {
            // Many buffers' worth: the writer must learn of the failure before it has written them all.
            for (int i = 0; i < 256; i++) output.writeBytes(chunk, 0, chunk.length);
        } catch (IOException e) {
            failure = e;
        }
        try {
            output.close();
        } catch (IOException e) {
            if (failure == null) failure = e;
        }
        assertNotNull("writes to /dev/full reported no failure", failure);
        assertTrue("the failure names the error and the file: " + failure,
                failure.getMessage().contains("ENOSPC") && failure.getMessage().contains("/dev/full"));
    }

    /** A file of many buffers written asynchronously in EVICT and DIRECT holds every byte, and nothing is cached. */
    public void testAsynchronousWritesLandWhole() throws IOException {
        for (CacheMode mode : new CacheMode[] {CacheMode.EVICT, CacheMode.DIRECT}) {
            Path path = createTempDir().resolve("_0.fdt");
            byte[] data = new byte[StorageIndexOutput.BUFFER_BYTES * 9 + 12345];
            random().nextBytes(data);
            StorageFile file = StorageFile.open(path, mode, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
            try (StorageIndexOutput output = new StorageIndexOutput("test", "_0.fdt", file,
                    new IoTally().counter("fdt", ContextKind.MERGE))) {
                for (int at = 0; at < data.length; ) {
                    int now = Math.min(data.length - at, 1 + random().nextInt(300_000));
                    output.writeBytes(data, at, now);
                    at += now;
                }
                assertEquals(data.length, output.getFilePointer());
            }
            io.pagewise.Residency left = io.pagewise.PageCache.residency(path);
            assertTrue(mode + ": " + left.residentPages() + " of " + left.totalPages() + " pages cached",
                    left.residentPages() <= 1 + left.totalPages() / 100);
            assertArrayEquals(mode + ": the file holds what was written", data, Files.readAllBytes(path));
        }
    }

    /**
     * Shorts, ints and longs that straddle a buffer's end (Lucene's postings write packed longs after variable-length
     * ints, at any offset) still leave every buffer written full: one short write would put every later one off the
     * page boundaries, and EVICT would then copy them into the page cache instead of writing them by O_DIRECT. So
     * nothing of the file is cached while it is written, and it holds exactly DataOutput's little-endian bytes.
     */
    public void testValuesAcrossBufferEndsKeepWritesWhole() throws IOException {
        for (CacheMode mode : new CacheMode[] {CacheMode.EVICT, CacheMode.DIRECT}) {
            Path path = createTempDir().resolve("_2.doc");
            org.apache.lucene.store.ByteBuffersDataOutput expected = new org.apache.lucene.store.ByteBuffersDataOutput();
            StorageFile file = StorageFile.open(path, mode, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
            io.pagewise.Residency whileOpen;
            try (StorageIndexOutput output = new StorageIndexOutput("test", "_2.doc", file,
                    new IoTally().counter("doc", ContextKind.MERGE))) {
                while (output.getFilePointer() < 9L * StorageIndexOutput.BUFFER_BYTES) {
                    long value = random().nextLong();
                    switch (random().nextInt(4)) {
                        case 0 -> { output.writeByte((byte) value); expected.writeByte((byte) value); }
                        case 1 -> { output.writeShort((short) value); expected.writeShort((short) value); }
                        case 2 -> { output.writeInt((int) value); expected.writeInt((int) value); }
                        default -> { output.writeLong(value); expected.writeLong(value); }
                    }
                }
                whileOpen = io.pagewise.PageCache.residency(path);
            }
            assertEquals(mode + ": pages cached while the file was written, of " + whileOpen.totalPages(), 0,
                    whileOpen.residentPages());
            assertArrayEquals(mode + ": the file holds DataOutput's bytes", expected.toArrayCopy(),
                    Files.readAllBytes(path));
        }
    }

    /**
     * The writes go into space allocated ahead of them (on ext4 an O_DIRECT write that extends the file would go to
     * an io_uring worker thread); close cuts the file back to the bytes written.
     */
    public void testSpaceAllocatedAheadIsCutBackAtClose() throws IOException {
        Path dir = createTempDir();
        try (StorageFile probe = StorageFile.open(dir.resolve("probe"), CacheMode.EVICT, StandardOpenOption.CREATE_NEW,
                StandardOpenOption.WRITE)) {
            assumeTrue("fallocate on " + Files.getFileStore(dir).type(), probe.allocate(0, 4096));
        }
        for (CacheMode mode : new CacheMode[] {CacheMode.EVICT, CacheMode.DIRECT}) {
            Path path = dir.resolve("_1_" + mode + ".fdt");
            byte[] data = new byte[StorageIndexOutput.BUFFER_BYTES * 3 + 100];
            random().nextBytes(data);
            StorageFile file = StorageFile.open(path, mode, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
            try (StorageIndexOutput output = new StorageIndexOutput("test", path.getFileName().toString(), file,
                    new IoTally().counter("fdt", ContextKind.MERGE))) {
                output.writeBytes(data, 0, data.length);
                assertTrue(mode + ": allocated ahead while open: " + Files.size(path),
                        Files.size(path) >= StorageIndexOutput.BUFFER_BYTES + StorageIndexOutput.ALLOCATE_AHEAD);
            }
            assertEquals(mode + ": the size after close", data.length, Files.size(path));
            assertArrayEquals(mode + ": the file holds what was written", data, Files.readAllBytes(path));
        }
    }

    public void testAFailedAsynchronousWriteFailsTheNextWrite() throws IOException {
        Path full = Path.of("/dev/full");
        assumeTrue("needs /dev/full", Files.isWritable(full));
        byte[] chunk = new byte[StorageIndexOutput.BUFFER_BYTES];
        StorageFile file = StorageFile.open(full, CacheMode.EVICT, StandardOpenOption.WRITE);
        try (StorageIndexOutput output = new StorageIndexOutput("test", "_0.fdt", file,
                new IoTally().counter("fdt", ContextKind.MERGE))) {
            IOException thrown = expectThrows(IOException.class, () -> {
                for (int i = 0; i < 1024; i++) output.writeBytes(chunk, 0, chunk.length);
            });
            assertTrue("the failure names the error: " + thrown, thrown.getMessage().contains("ENOSPC"));
        } catch (IOException closing) {
            assertTrue("close names the error: " + closing, closing.getMessage().contains("ENOSPC"));
        }
    }
}

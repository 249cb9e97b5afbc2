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
 * An output in a mode that waits for the disk hands its full buffers to background threads: a write that fails
 * there must still fail the output, at its next write or at the latest at close, with the error of the write itself.
 * /dev/full answers every write with ENOSPC.
 */
public class TestBackgroundWrites extends LuceneTestCase {
    @BeforeClass
    public static void announce() {
        TestLines.announce(TestBackgroundWrites.class);
    }

    @Before
    public void needsNative() {
        PageCacheChecks.assumeNative(); // on the pure-Java path every output is WRITEBACK, written by its own thread
    }

    public void testAFailedBackgroundWriteFailsTheOutput() throws IOException {
        Path full = Path.of("/dev/full");
        assumeTrue("needs /dev/full", Files.isWritable(full));
        byte[] chunk = new byte[64 << 10];
        random().nextBytes(chunk);
        IOException failure = null;
        StorageFile file = StorageFile.open(full, CacheMode.EVICT, StandardOpenOption.WRITE);
        StorageIndexOutput output = new StorageIndexOutput("test", "_0.fdt", file,
                new IoTally().counter("fdt", ContextKind.MERGE), true);
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

    public void testAFailedBackgroundWriteFailsTheNextWrite() throws IOException {
        Path full = Path.of("/dev/full");
        assumeTrue("needs /dev/full", Files.isWritable(full));
        byte[] chunk = new byte[StorageIndexOutput.BUFFER_BYTES];
        StorageFile file = StorageFile.open(full, CacheMode.EVICT, StandardOpenOption.WRITE);
        try (StorageIndexOutput output = new StorageIndexOutput("test", "_0.fdt", file,
                new IoTally().counter("fdt", ContextKind.MERGE), true)) {
            IOException thrown = expectThrows(IOException.class, () -> {
                for (int i = 0; i < 1024; i++) output.writeBytes(chunk, 0, chunk.length);
            });
            assertTrue("the failure names the error: " + thrown, thrown.getMessage().contains("ENOSPC"));
        } catch (IOException closing) {
            assertTrue("close names the error: " + closing, closing.getMessage().contains("ENOSPC"));
        }
    }
}

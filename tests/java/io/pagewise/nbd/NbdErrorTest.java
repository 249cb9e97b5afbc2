package io.pagewise.nbd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.backends.NbdDevice;
import io.pagewise.device.BlockDevice;
import io.pagewise.device.Capabilities;
import io.pagewise.device.Capability;
import io.pagewise.device.DeviceException;
import io.pagewise.device.FilterDevice;
import io.pagewise.device.ZeroFlag;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import io.pagewise.nbd.server.NbdServer;
import io.pagewise.nbd.client.NbdClient;

/**
 * One NBD error type on both sides: what an export throws is what the client receives, so an export that forwards to
 * another server through {@link NbdClient} passes that server's errors on with their values.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class NbdErrorTest {
    @TempDir
    Path dir;

    /** Reads zeros; every write is refused with ENOSPC, as by a full quota. */
    private static final class FullExport implements BlockDevice {
        @Override public long size() { return 1 << 20; }

        @Override
        public void readFully(ByteBuffer dst, long offset) {
            while (dst.hasRemaining()) dst.put((byte) 0);
        }

        @Override
        public void write(ByteBuffer src, long offset, boolean fua) throws IOException {
            throw new DeviceException(DeviceException.ENOSPC, "quota reached");
        }

        @Override public Capabilities capabilities() { return Capabilities.of(Capability.WRITE); }
    }

    /** Forwards reads and writes to another server; refuses zeroing with ENOTSUP as a fast-zero-only export would. */
    private static final class ForwardingExport extends FilterDevice {
        ForwardingExport(NbdClient upstream) {
            super(new NbdDevice(upstream));
        }

        @Override
        public void zero(long offset, long length, java.util.Set<ZeroFlag> flags) throws IOException {
            throw new DeviceException(DeviceException.ENOTSUP, "this export only zeroes fast, and it cannot");
        }

        @Override
        public Capabilities capabilities() { return Capabilities.of(Capability.WRITE, Capability.ZERO); }
    }

    @Test
    void anExportsNbdErrorReachesTheClientWithItsValueEvenFromAnotherServer() throws Exception {
        try (NbdServer back = NbdServer.builder().export("", new FullExport()).unixSocket(dir.resolve("back.sock"))
                     .start();
             NbdClient upstream = NbdClient.connect(back.uri());
             NbdServer front = NbdServer.builder().export("", new ForwardingExport(upstream))
                     .unixSocket(dir.resolve("front.sock")).start();
             NbdClient nbd = NbdClient.connect(front.uri())) {
            assertEquals(1 << 20, nbd.size());
            nbd.read(ByteBuffer.allocate(4096), 0);

            NbdException full = assertThrows(NbdException.class, () -> nbd.write(ByteBuffer.allocate(4096), 8192, false));
            assertEquals(NbdException.ENOSPC, full.error(), "the back server's ENOSPC, not EIO: " + full.getMessage());
            assertEquals("WRITE", full.command());
            assertEquals(8192, full.offset());
            // The front server tells the operation, range and errno; the back server's own words stay in its log.
            assertTrue(full.getMessage().startsWith("NBD WRITE at 8192 (+4096) failed: ENOSPC (write at 8192 (+4096): "
                    + "No space left on device (ENOSPC))"), full.getMessage());

            NbdException unsupported = assertThrows(NbdException.class, () -> nbd.zero(4096, 4096, ZeroFlag.TRIM));
            assertEquals(95, unsupported.error());
            assertTrue(unsupported.getMessage().contains("failed: ENOTSUP (write zeroes at 4096 (+4096): "
                    + "Operation not supported (EOPNOTSUPP))"), unsupported.getMessage());
        }
    }

    @Test
    void aDevicesAnswerCarriesItsErrnoAndMessage() {
        DeviceException e = new DeviceException(DeviceException.ENOSPC, "quota reached");
        assertEquals(28, e.errno());
        assertEquals("quota reached", e.getMessage());
        assertEquals("ENOSPC", e.errnoName());
        assertEquals(28, DeviceException.errnoOf(e));
        assertEquals("ENOSPC", NbdException.errorName(e.errno()));
        assertEquals("ENOTSUP", NbdException.errorName(NbdException.ENOTSUP));
        assertEquals("error 4", NbdException.errorName(4));
    }
}

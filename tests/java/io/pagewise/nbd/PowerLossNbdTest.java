package io.pagewise.nbd;

import static io.pagewise.nbd.wire.Protocol.CMD_FLAG_FUA;
import static io.pagewise.nbd.wire.Protocol.CMD_WRITE_ZEROES;
import static io.pagewise.testing.TestData.random;
import static java.nio.file.StandardOpenOption.READ;
import static java.nio.file.StandardOpenOption.WRITE;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.CacheMode;
import io.pagewise.backends.FileDevice;
import io.pagewise.device.ZeroFlag;
import io.pagewise.nbd.client.NbdClient;
import io.pagewise.nbd.client.RawConnection;
import io.pagewise.nbd.server.NbdServer;
import io.pagewise.testing.ExternalTools;
import io.pagewise.testing.LazyFsExtension;
import io.pagewise.testing.LazyFsMount;
import io.pagewise.testing.RecordingLogger;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * What the NBD server acknowledges as durable survives a power cut: a file on LazyFS served in each cache mode, the
 * requests sent with the Java client, the power cut while the server still runs (it is never closed first, since
 * closing may sync), and the backing file read back. FUA writes, writes before an acknowledged FLUSH and
 * WRITE_ZEROES with FUA in every mode that flushes; every plain write and WRITE_ZEROES in WRITETHROUGH and
 * DIRECTSYNC. UNSAFE promises nothing and is left out.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class PowerLossNbdTest {
    @RegisterExtension
    static final LazyFsExtension LAZYFS = new LazyFsExtension();

    private static final int BLOCK = 64 << 10;
    private static final int BLOCKS = 64;
    private static final AtomicInteger FILES = new AtomicInteger();

    @TempDir
    static Path dir;

    /** A served file on the mount, its old data durable (written and fsynced), and a client connected to it. */
    private static final class Served implements AutoCloseable {
        final String name = "disk-" + FILES.incrementAndGet();
        final Path socket;
        final FileDevice export;
        final NbdServer server;
        final NbdClient client;

        Served(CacheMode mode, byte[] old) throws IOException {
            LazyFsMount lazyfs = LAZYFS.mount();
            if (mode.needsNative()) ExternalTools.requireNativeLibrary();
            Path file = lazyfs.durableFile(name, old);
            socket = dir.resolve(name + ".sock");
            export = FileDevice.open(file, mode, READ, WRITE);
            NbdServer started = null;
            NbdClient connected = null;
            try {
                started = NbdServer.builder().export("", export).unixSocket(socket)
                        .logger(new RecordingLogger("[server] ", System.Logger.Level.WARNING)).start();
                connected = NbdClient.connect(started.uri());
            } catch (IOException | RuntimeException e) {
                if (started != null) started.close();
                export.close();
                throw e;
            }
            server = started;
            client = connected;
        }

        void writeBlocks(byte[] data, boolean fua) throws IOException {
            ByteBuffer buffer = ByteBuffer.allocateDirect(BLOCK);
            for (int b = 0; b < BLOCKS; b++) {
                buffer.clear().put(data, b * BLOCK, BLOCK).flip();
                client.write(buffer, (long) b * BLOCK, fua);
            }
        }

        /**
         * WRITE_ZEROES on every other block, and the same blocks of expected zeroed. With FUA (which NbdClient
         * cannot send) on a connection of its own; without, through the client, half of them allowed to trim.
         */
        void zeroEveryOtherBlock(byte[] expected, boolean fua) throws Exception {
            for (int b = 0; b < BLOCKS; b += 2) Arrays.fill(expected, b * BLOCK, (b + 1) * BLOCK, (byte) 0);
            if (!fua) {
                for (int b = 0; b < BLOCKS; b += 2) {
                    client.zero((long) b * BLOCK, BLOCK, b % 4 == 0 ? ZeroFlag.NONE : ZeroFlag.TRIM);
                }
                return;
            }
            assertTrue(client.info().canZero() && client.info().canFua(), "the export takes WRITE_ZEROES and FUA");
            try (SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX)) {
                channel.connect(UnixDomainSocketAddress.of(socket));
                try (RawConnection connection = RawConnection.negotiate(channel, server.uri(), "")) {
                    for (int b = 0; b < BLOCKS; b += 2) {
                        connection.send(CMD_WRITE_ZEROES, (long) b * BLOCK, BLOCK, CMD_FLAG_FUA);
                    }
                }
            }
        }

        @Override
        public void close() throws IOException {
            try {
                client.close();
            } finally {
                try {
                    server.close();
                } finally {
                    export.close();
                }
            }
        }
    }

    /** What a test sends to the served file before the power is cut. */
    private interface Requests {
        void to(Served served) throws Exception;
    }

    /**
     * Serves a file holding old, sends the requests, cuts the power with the server still up, and checks that
     * expected survived.
     */
    private static void assertCutKeeps(CacheMode mode, byte[] old, Requests requests, byte[] expected, String what)
            throws Exception {
        LazyFsMount lazyfs = LAZYFS.mount();
        String name;
        try (Served served = new Served(mode, old)) {
            name = served.name;
            requests.to(served);
            lazyfs.powerCut();
        }
        lazyfs.assertSurvived(name, expected, BLOCK, mode + ": " + what);
    }

    /** Overwrites a served file's old data with NBD writes, each with FUA or without, then a FLUSH or not. */
    private static void assertOverwriteSurvives(CacheMode mode, boolean fua, boolean flush) throws Exception {
        byte[] fresh = random(2, BLOCKS * BLOCK);
        assertCutKeeps(mode, random(1, BLOCKS * BLOCK), served -> {
            served.writeBlocks(fresh, fua);
            if (flush) served.client.flush();
        }, fresh, BLOCKS + " NBD writes" + (fua ? " with FUA" : "") + (flush ? ", then FLUSH" : ", no FLUSH"));
    }

    /** Zeroes every other block of a served file of old data with WRITE_ZEROES, with FUA or without. */
    private static void assertWriteZeroesSurvive(CacheMode mode, boolean fua) throws Exception {
        byte[] expected = random(5, BLOCKS * BLOCK);
        assertCutKeeps(mode, expected.clone(), served -> served.zeroEveryOtherBlock(expected, fua), expected,
                "every other block WRITE_ZEROES " + (fua ? "with" : "without") + " FUA");
    }

    @ParameterizedTest
    @MethodSource("io.pagewise.testing.LazyFsMount#durableModes")
    void fuaWritesSurvive(CacheMode mode) throws Exception {
        assertOverwriteSurvives(mode, true, false);
    }

    @ParameterizedTest
    @MethodSource("io.pagewise.testing.LazyFsMount#durableModes")
    void writesBeforeAFlushSurvive(CacheMode mode) throws Exception {
        assertOverwriteSurvives(mode, false, true);
    }

    @ParameterizedTest
    @MethodSource("io.pagewise.testing.LazyFsMount#durableModes")
    void writeZeroesWithFuaSurvives(CacheMode mode) throws Exception {
        assertWriteZeroesSurvive(mode, true);
    }

    @ParameterizedTest
    @MethodSource("io.pagewise.testing.LazyFsMount#everyWriteModes")
    void everyWriteSurvives(CacheMode mode) throws Exception {
        assertOverwriteSurvives(mode, false, false);
    }

    /** Over NBD, in the modes that make every write durable, a WRITE_ZEROES without FUA is durable once answered. */
    @ParameterizedTest
    @MethodSource("io.pagewise.testing.LazyFsMount#everyWriteModes")
    void everyWriteZeroesSurvives(CacheMode mode) throws Exception {
        assertWriteZeroesSurvive(mode, false);
    }
}

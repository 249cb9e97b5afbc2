package io.pagewise.nbd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.CacheMode;
import io.pagewise.Extent;
import io.pagewise.backends.FileDevice;
import io.pagewise.device.BlockDevice;
import io.pagewise.device.Capabilities;
import io.pagewise.device.Capability;
import io.pagewise.device.ZeroFlag;
import io.pagewise.internal.Errno;
import io.pagewise.nbd.client.NbdClient;
import io.pagewise.nbd.server.ExportEntry;
import io.pagewise.nbd.server.ExportSource;
import io.pagewise.nbd.server.NbdServer;
import io.pagewise.nbd.wire.Protocol;
import io.pagewise.testing.ExternalTools;
import io.pagewise.testing.RecordingLogger;
import java.io.EOFException;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a client is told of a failure names the operation, the range and the errno, never the server's files or its
 * system calls: those go to the server's log only.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ErrorReplyTextTest {
    @TempDir
    Path dir;

    /** A write to a file on a full file system: pwritev's real ENOSPC, whose message names the file. */
    @Test
    void aFullFileSystemsEnospcReachesTheClientWithoutThePath() throws Exception {
        Path mount = Files.createDirectory(dir.resolve("small"));
        mountTmpfs(mount, "1m");
        try {
            Path file = mount.resolve("disk.img");
            try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
                raf.setLength(8 << 20); // sparse: 8 MiB on a file system of 1 MiB
            }
            RecordingLogger log = new RecordingLogger("[server] ", System.Logger.Level.WARNING);
            try (FileDevice device = FileDevice.open(file, CacheMode.WRITEBACK, StandardOpenOption.READ,
                         StandardOpenOption.WRITE);
                 NbdServer server = NbdServer.builder().export("", device).unixSocket(dir.resolve("nbd.sock"))
                         .logger(log).start()) {
                byte[] data = new byte[256 << 10];
                new Random(1).nextBytes(data);
                NbdException full;
                try (NbdClient client = NbdClient.connect(server.uri())) {
                    full = assertThrows(NbdException.class, () -> {
                        for (long offset = 0; offset < 8 << 20; offset += data.length) {
                            client.write(ByteBuffer.wrap(data), offset, false);
                        }
                    });
                }
                assertEquals(NbdException.ENOSPC, full.error(), full.getMessage());
                assertTrue(full.getMessage().contains("write at " + full.offset() + " (+262144): No space left on device (ENOSPC)"),
                        full.getMessage());
                assertNoServerDetail(full.getMessage(), mount, "pwritev");
                String logged = String.join("\n", log.messages(System.Logger.Level.WARNING, "failed"));
                assertTrue(logged.contains(file.toString()) && logged.contains("pwritev"),
                        "the server's log names the file and the call: " + logged);

                ExternalTools.require("nbdcopy");
                Path source = dir.resolve("source.bin");
                byte[] big = new byte[4 << 20];
                new Random(2).nextBytes(big);
                Files.write(source, big);
                ExternalTools.Result copy = ExternalTools.run(30, "nbdcopy", source.toString(), server.uri());
                assertTrue(copy.status() != 0, "nbdcopy onto a full file system fails: " + copy.stdout());
                assertTrue(copy.stderr().contains("No space left on device"), copy.stderr());
                assertNoServerDetail(copy.stderr(), mount, "pwritev");
            }
        } finally {
            ExternalTools.run(30, "umount", "-l", mount.toString());
        }
    }

    /**
     * Every request that can fail on the device (READ whole and in parts, WRITE, WRITE_ZEROES, TRIM, FLUSH,
     * BLOCK_STATUS) is answered with the operation, range and errno; the device's message with its path is logged.
     */
    @Test
    void noRequestsErrorReplyNamesTheServersFileOrCall() throws Exception {
        Path file = dir.resolve("secret-dir").resolve("disk.img");
        Files.createDirectories(file.getParent());
        // DEBUG: the log line of every request, where WARNING lines of failures are throttled.
        RecordingLogger log = new RecordingLogger(null, System.Logger.Level.DEBUG);
        FailingFile failing = new FailingFile(file);
        try (NbdServer server = NbdServer.builder().export("", failing).unixSocket(dir.resolve("f.sock"))
                     .maxInflightBytes(1 << 20).logger(log).start();
             NbdClient client = NbdClient.connect(server.uri())) {
            List<NbdException> failures = List.of(
                    assertThrows(NbdException.class, () -> client.readFully(ByteBuffer.allocate(4096), 8192)),
                    assertThrows(NbdException.class, () -> client.readFully(ByteBuffer.allocate(4 << 20), 0)),
                    assertThrows(NbdException.class, () -> client.write(ByteBuffer.allocate(4096), 8192, false)),
                    assertThrows(NbdException.class, () -> client.zero(4096, 4096, ZeroFlag.TRIM)),
                    assertThrows(NbdException.class, () -> client.trim(4096, 8192)),
                    assertThrows(NbdException.class, client::flush),
                    assertThrows(NbdException.class, () -> client.extents(0, 65536)));
            List<String> expected = List.of("read at 8192 (+4096): Input/output error (EIO)",
                    "read at 0 (+4194304): Input/output error (EIO)",
                    "write at 8192 (+4096): Disk quota exceeded (EDQUOT)",
                    "write zeroes at 4096 (+4096): Operation not supported (EOPNOTSUPP)",
                    "trim at 4096 (+8192): Operation not supported (EOPNOTSUPP)",
                    "flush: Input/output error (EIO)",
                    "block status at 0 (+65536): Invalid argument (EINVAL)");
            for (int i = 0; i < failures.size(); i++) {
                String message = failures.get(i).getMessage();
                assertTrue(message.contains(expected.get(i)), "expected '" + expected.get(i) + "' in: " + message);
                assertNoServerDetail(message, file.getParent(), "preadv", "pwritev", "fallocate", "fdatasync", "lseek");
            }
            failing.flushFails = false; // the flush at shutdown
            String logged = String.join("\n", log.messages(System.Logger.Level.DEBUG, "-> error"));
            for (String call : List.of("preadv", "pwritev", "fallocate", "fdatasync", "lseek")) {
                assertTrue(logged.contains(call + " " + file), "the log names " + call + " and the file: " + logged);
            }
        }
    }

    /** An export that cannot be opened is refused with the export's name and the errno, not the server's path. */
    @Test
    void anExportThatCannotBeOpenedIsRefusedWithoutThePath() throws Exception {
        Path secret = dir.resolve("srv-images");
        RecordingLogger log = new RecordingLogger("[server] ", System.Logger.Level.WARNING);
        ExportSource unopenable = new ExportSource() {
            @Override
            public List<Listing> list() throws IOException {
                throw Errno.openFailure(-Errno.EACCES, "opendir", secret);
            }

            @Override
            public ExportEntry find(String name) throws IOException {
                IOException failed = Errno.openFailure(-Errno.EACCES, "open", secret.resolve(name));
                // An opener may wrap the failed call, as the command line's does: the errno is the cause's.
                throw name.startsWith("wrapped") ? new IOException(secret.resolve(name) + ": permission denied", failed) : failed;
            }
        };
        try (NbdServer server = NbdServer.builder().exports(unopenable).unixSocket(dir.resolve("o.sock"))
                .logger(log).start()) {
            String uri = "nbd+unix:///disk.img?socket=" + dir.resolve("o.sock");
            IOException refused = assertThrows(IOException.class, () -> NbdClient.connect(uri).close());
            assertTrue(refused.getMessage().contains("export 'disk.img' cannot be opened: Permission denied (EACCES)"),
                    refused.getMessage());
            assertNoServerDetail(refused.getMessage(), secret, "open ");
            String wrappedUri = "nbd+unix:///wrapped.img?socket=" + dir.resolve("o.sock");
            IOException wrapped = assertThrows(IOException.class, () -> NbdClient.connect(wrappedUri).close());
            assertTrue(wrapped.getMessage().contains("export 'wrapped.img' cannot be opened: Permission denied (EACCES)"),
                    wrapped.getMessage());
            assertNoServerDetail(wrapped.getMessage(), secret, "open ");
            String listed = listError(dir.resolve("o.sock"));
            assertEquals("cannot list the exports: Permission denied (EACCES)", listed);
            assertNoServerDetail(listed, secret, "opendir");
        }
        String logged = String.join("\n", log.messages(System.Logger.Level.WARNING, "cannot"));
        assertTrue(logged.contains("open " + secret.resolve("disk.img")) && logged.contains("opendir " + secret),
                "the server's log names the calls and paths: " + logged);
    }

    /** The message of the error a server answers NBD_OPT_LIST with, spoken byte by byte. */
    private static String listError(Path socket) throws IOException {
        try (SocketChannel channel = SocketChannel.open(UnixDomainSocketAddress.of(socket))) {
            ByteBuffer greeting = ByteBuffer.allocate(18);
            while (greeting.hasRemaining()) if (channel.read(greeting) < 0) throw new EOFException("greeting");
            channel.write(ByteBuffer.allocate(4).putInt(Protocol.FLAG_FIXED_NEWSTYLE | Protocol.FLAG_NO_ZEROES).flip());
            channel.write(ByteBuffer.allocate(16).putLong(Protocol.IHAVEOPT).putInt(Protocol.OPT_LIST).putInt(0).flip());
            ByteBuffer header = ByteBuffer.allocate(20);
            while (header.hasRemaining()) if (channel.read(header) < 0) throw new EOFException("reply header");
            header.flip();
            assertEquals(Protocol.OPTION_REPLY_MAGIC, header.getLong());
            assertEquals(Protocol.OPT_LIST, header.getInt());
            assertEquals(Protocol.REP_ERR_UNKNOWN, header.getInt());
            ByteBuffer message = ByteBuffer.allocate(header.getInt());
            while (message.hasRemaining()) if (channel.read(message) < 0) throw new EOFException("reply message");
            return new String(message.array(), StandardCharsets.UTF_8);
        }
    }

    private static void assertNoServerDetail(String text, Path path, String... calls) {
        assertFalse(text.contains(path.toString()), "the server's path reached the client: " + text);
        for (String call : calls) assertFalse(text.contains(call), "the server's call " + call + " reached the client: " + text);
    }

    private static void mountTmpfs(Path at, String size) throws IOException {
        ExternalTools.Result mounted = ExternalTools.run(30, "mount", "-t", "tmpfs", "-o", "size=" + size, "tmpfs", at.toString());
        if (mounted.status() != 0) {
            ExternalTools.unavailable("cannot mount a tmpfs (needs root): " + mounted.stderr().strip(),
                    "a real ENOSPC from a full file system must be tested");
        }
    }

    /** A file device whose every call fails as the native calls fail, with messages that name the call and the file. */
    private static final class FailingFile implements BlockDevice {
        private final Path file;
        volatile boolean flushFails = true;

        FailingFile(Path file) {
            this.file = file;
        }

        @Override public long size() { return 8 << 20; }

        @Override
        public void readFully(ByteBuffer dst, long offset) throws IOException {
            readFully(new ByteBuffer[] {dst}, offset);
        }

        @Override
        public void readFully(ByteBuffer[] dsts, long offset) throws IOException {
            long length = 0;
            for (ByteBuffer dst : dsts) length += dst.remaining();
            // The first part of a long READ goes out before the next one fails: that failure ends a reply begun.
            if (offset == 0 && length < 4 << 20) {
                for (ByteBuffer dst : dsts) dst.position(dst.limit());
                return;
            }
            throw Errno.exception(-Errno.EIO, "preadv", file, offset, length);
        }

        @Override
        public void write(ByteBuffer src, long offset, boolean fua) throws IOException {
            throw Errno.exception(-Errno.EDQUOT, "pwritev", file, offset, src.remaining());
        }

        @Override
        public void zero(long offset, long length, Set<ZeroFlag> flags) throws IOException {
            throw Errno.exception(-Errno.EOPNOTSUPP, "fallocate", file, offset, length);
        }

        @Override
        public void trim(long offset, long length, boolean fua) throws IOException {
            throw Errno.exception(-Errno.EOPNOTSUPP, "fallocate", file, offset, length);
        }

        @Override
        public void flush() throws IOException {
            if (!flushFails) return;
            throw Errno.exception(-Errno.EIO, "fdatasync", file, -1, 0);
        }

        @Override
        public List<Extent> extents(long offset, long length, int maxExtents) throws IOException {
            throw Errno.exception(-Errno.EINVAL, "lseek", file, offset, length);
        }

        @Override
        public Capabilities capabilities() {
            return Capabilities.of(Capability.WRITE, Capability.FLUSH, Capability.TRIM, Capability.ZERO,
                    Capability.EXTENTS, Capability.HOLES);
        }

        @Override public String name() { return file.toString(); }
    }
}

package io.pagewise;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.backends.FileDevice;
import io.pagewise.backends.MemoryDevice;
import io.pagewise.backends.NbdDevice;
import io.pagewise.backends.SyntheticDevices;
import io.pagewise.copy.Copier;
import io.pagewise.copy.CopyOptions;
import io.pagewise.device.BlockDevice;
import io.pagewise.nbd.client.NbdClient;
import io.pagewise.nbd.server.NbdServer;
import io.pagewise.testing.ExternalTools;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * What an application sees: the server and the copier log through {@link System.Logger}, which the JDK's default
 * {@link System.LoggerFinder} hands to java.util.logging, so a JUL handler on the documented logger names receives
 * their messages at the documented levels (DEBUG arrives as FINE, ERROR as SEVERE), and the level an application
 * sets there decides what is logged.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class ApplicationLoggingTest {
    /** Held for the whole test: java.util.logging keeps its loggers, and so the levels set on them, weakly. */
    private final Logger server = Logger.getLogger(NbdServer.LOGGER_NAME);
    private final Logger copy = Logger.getLogger(Copier.LOGGER_NAME);
    private final List<LogRecord> records = new CopyOnWriteArrayList<>();
    private final Handler capture = new Handler() {
        @Override
        public void publish(LogRecord record) {
            records.add(record);
        }

        @Override
        public void flush() {}

        @Override
        public void close() {}
    };

    @TempDir
    Path dir;

    @BeforeEach
    void listen() {
        for (Logger logger : List.of(server, copy)) {
            logger.setLevel(Level.ALL);
            logger.addHandler(capture);
        }
    }

    @AfterEach
    void stopListening() {
        for (Logger logger : List.of(server, copy)) {
            logger.removeHandler(capture);
            logger.setLevel(null);
        }
    }

    /** The messages logged under a name at a level that contain text. */
    private List<String> logged(String name, Level level, String text) {
        return records.stream()
                .filter(r -> r.getLoggerName().equals(name) && r.getLevel() == level && r.getMessage().contains(text))
                .map(LogRecord::getMessage).collect(Collectors.toList());
    }

    private String all() {
        return records.stream().map(r -> r.getLoggerName() + " " + r.getLevel() + " " + r.getMessage())
                .collect(Collectors.joining("\n"));
    }

    @Test
    void theServerLogsConnectionsRequestsAndMisbehavingClientsAtTheirLevels() throws Exception {
        Path socket = dir.resolve("nbd.sock");
        try (NbdServer nbd = NbdServer.builder().export("disk", new MemoryDevice(1 << 20)).unixSocket(socket).start()) {
            try (NbdClient client = NbdClient.connect(nbd.uri("disk"))) {
                client.read(ByteBuffer.allocate(4096), 8192);
            }
            try (SocketChannel breaksTheProtocol = greeted(socket)) {
                breaksTheProtocol.write(ByteBuffer.allocate(4).putInt(0x80 | 1).flip()); // an unknown client flag
                awaitEndOfStream(breaksTheProtocol);
            }
            try (SocketChannel leaves = greeted(socket)) {
                // Fixed newstyle and no zeroes, then half an option header, and it hangs up.
                leaves.write(ByteBuffer.allocate(12).putInt(3).putLong(0x49484156454F5054L).flip());
            }
            awaitNoConnections(nbd);
        }
        String name = NbdServer.LOGGER_NAME;
        assertEquals(1, logged(name, Level.FINE, "connection 1: serving 'disk'").size(), all());
        assertEquals(1, logged(name, Level.FINE, "connection 1: READ offset=8192 length=4096 flags=0x0").size(), all());
        assertEquals(1, logged(name, Level.WARNING, "connection 2: dropped: unknown client flags 0x81").size(), all());
        assertEquals(1, logged(name, Level.INFO, "connection 3: client went away").size(), all());
    }

    @Test
    void aFailedFlushAtShutdownIsAnError() throws Exception {
        ExternalTools.requireNativeLibrary();
        // fdatasync on /dev/null fails with EINVAL: the flush a server makes of a writable export when it stops.
        try (FileDevice devNull = FileDevice.open(Path.of("/dev/null"), CacheMode.WRITEBACK, java.nio.file.StandardOpenOption.READ, java.nio.file.StandardOpenOption.WRITE)) {
            NbdServer nbd = NbdServer.builder().export("", devNull).unixSocket(dir.resolve("nbd.sock")).start();
            assertThrows(IOException.class, nbd::close);
        }
        assertEquals(1, logged(NbdServer.LOGGER_NAME, Level.SEVERE, "flush of export '' at shutdown failed").size(), all());
    }

    @Test
    void theApplicationsLevelDecidesWhatIsLogged() throws Exception {
        server.setLevel(Level.INFO);
        Path socket = dir.resolve("nbd.sock");
        try (NbdServer nbd = NbdServer.builder().export("", new MemoryDevice(1 << 20)).unixSocket(socket).start();
             NbdClient client = NbdClient.connect(nbd.uri())) {
            client.read(ByteBuffer.allocate(512), 0);
        }
        assertEquals(List.of(), logged(NbdServer.LOGGER_NAME, Level.FINE, ""), "no DEBUG lines at INFO");
    }

    @Test
    void theCopierAndItsEndpointsLogWhatTheyFoundAndDidAtDebug() throws Exception {
        Path socket = dir.resolve("nbd.sock");
        Path target = dir.resolve("copy.img");
        try (NbdServer nbd = NbdServer.builder().export("", new MemoryDevice(1 << 20)).unixSocket(socket).start()) {
            try (BlockDevice source = SyntheticDevices.pattern(1 << 20);
                 NbdDevice destination = NbdDevice.connect(nbd.uri(), 2)) {
                new Copier(new CopyOptions().requestSize(64 << 10)).copy(source, destination);
            }
            try (NbdDevice source = NbdDevice.connect(nbd.uri(), 1);
                 FileDevice destination = FileDevice.openOrCreate(target, CacheMode.WRITEBACK, 1 << 20)) {
                new Copier(new CopyOptions()).copy(source, destination);
            }
        }
        String name = Copier.LOGGER_NAME;
        String uri = "nbd+unix:///?socket=" + socket;
        assertEquals(1, logged(name, Level.FINE, "destination " + uri + " (2 connections, extended headers): 1048576 bytes, requests of 1 to ")
                .size(), all());
        assertEquals(1, logged(name, Level.FINE, "source " + uri + " (1 connection, extended headers): 1048576 bytes, requests of 1 to ")
                .size(), all());
        assertEquals(1, logged(name, Level.FINE, "source pattern:1048576: 1048576 bytes, requests of 1 to 2147483647 bytes,"
                + " no map of holes: everything is read as data").size(), all());
        assertEquals(1, logged(name, Level.FINE, "copying pattern:1048576 (1048576 bytes) to " + uri
                + ": 16 requests of up to 65536 bytes, aligned to 1, zero ranges zeroed").size(), all());
        assertEquals(1, logged(name, Level.FINE, "copied pattern:1048576 to " + uri + ": 1048576 bytes in ").size(), all());
        assertEquals(1, logged(name, Level.FINE, "destination " + target + " (created, writeback): 1048576 bytes")
                .size(), all());
        assertEquals(1, logged(name, Level.FINE, "reads as zeros already").size(), all());
        assertEquals(1, logged(name, Level.FINE, "zero ranges skipped").size(), "a new file reads as zeros: " + all());
        assertTrue(records.stream().filter(r -> r.getLoggerName().equals(name)).allMatch(r -> r.getLevel() == Level.FINE),
                "the copier logs at DEBUG only:\n" + all());
    }

    private static SocketChannel greeted(Path socket) throws IOException {
        SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX);
        channel.connect(UnixDomainSocketAddress.of(socket));
        ByteBuffer greeting = ByteBuffer.allocate(18);
        while (greeting.hasRemaining()) {
            if (channel.read(greeting) < 0) throw new IOException("no greeting");
        }
        return channel;
    }

    private static void awaitEndOfStream(SocketChannel channel) throws IOException {
        ByteBuffer any = ByteBuffer.allocate(64);
        while (channel.read(any.clear()) >= 0) {
            // the server sends nothing more before it closes
        }
    }

    private static void awaitNoConnections(NbdServer nbd) throws InterruptedException {
        while (nbd.connectionCount() > 0) Thread.sleep(5);
    }
}

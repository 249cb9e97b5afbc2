package io.pagewise.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.pagewise.backends.MemoryDevice;
import io.pagewise.nbd.server.NbdServer;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.lang.System.Logger.Level;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Log lines with syslog severity prefixes, as journald reads a service's stderr. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class SeverityLoggerTest {
    @TempDir
    Path dir;

    @Test
    void eachLevelGetsItsSeverityOnEveryLine() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        SeverityLogger log = new SeverityLogger("pagewise serve: ", new PrintStream(bytes, true, StandardCharsets.UTF_8), false);
        log.log(Level.ERROR, "flush failed");
        log.log(Level.WARNING, "two\nlines");
        log.log(Level.INFO, "client went away");
        log.log(Level.DEBUG, "not shown without -v");
        assertEquals("<3>pagewise serve: flush failed\n<4>pagewise serve: two\n<4>pagewise serve: lines\n"
                + "<6>pagewise serve: client went away\n", bytes.toString(StandardCharsets.UTF_8));
        ByteArrayOutputStream verbose = new ByteArrayOutputStream();
        new SeverityLogger("", new PrintStream(verbose, true, StandardCharsets.UTF_8), true).log(Level.DEBUG, "a request");
        assertEquals("<7>a request\n", verbose.toString(StandardCharsets.UTF_8));
    }

    @Test
    void aServerLogsAProtocolViolationAsAWarning() throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        SeverityLogger log = new SeverityLogger("", new PrintStream(bytes, true, StandardCharsets.UTF_8), false);
        try (MemoryDevice disk = new MemoryDevice(4096);
             NbdServer server = NbdServer.builder().export("", disk).unixSocket(dir.resolve("s")).logger(log).start()) {
            try (SocketChannel client = SocketChannel.open(server.address())) {
                java.nio.ByteBuffer greeting = java.nio.ByteBuffer.allocate(18);
                while (greeting.hasRemaining()) client.read(greeting);
                client.write(java.nio.ByteBuffer.allocate(4).putInt(0x80).flip()); // an unknown client flag
                assertEquals(-1, client.read(java.nio.ByteBuffer.allocate(1)), "the server drops the connection");
            }
        }
        String text = bytes.toString(StandardCharsets.UTF_8);
        assertEquals(1, text.lines().filter(l -> l.startsWith("<4>") && l.contains("dropped: unknown client flags 0x80")).count(), text);
        assertFalse(text.lines().anyMatch(l -> !l.matches("<[34567]>.*")), "every line has a severity: " + text);
    }
}

package io.pagewise.cli;

import static io.pagewise.testing.TestData.sparseFile;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.pagewise.CacheMode;
import io.pagewise.testing.ExternalTools;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** {@code pagewise serve}: its command line, captive --run mode, --stats, signals and the demo disk. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ServeCommandTest {
    @TempDir
    Path dir;

    private static CommandRun serve(String... args) {
        return CommandRun.command("serve", args);
    }

    private Path disk(long size) throws IOException {
        return sparseFile(dir.resolve("disk.img"), size);
    }

    private static void requireTool(String tool) {
        ExternalTools.require(tool);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "--frob|--frob",
            "--cache=fast|--cache=fast",
            "--hint=later|--hint=later",
            "--port=http|--port",
            "--max-inflight-bytes=12Q|--max-inflight-bytes",
            "--threads=0|--threads",
            "--handshake-timeout=-1|--handshake-timeout",
            "--max-handshakes=0|--max-handshakes",
            "--idle-timeout=soon|--idle-timeout",
            "--shutdown-grace=-5|--shutdown-grace",
            "--socket=/tmp/x.sock --port=1|--socket",
            "--bind=badhost.invalid|--bind=badhost.invalid",
            "--bind=|--bind",
            "--read-only=yes|--read-only",
            "a.img nbd://localhost/x|an NBD-URI is served alone",
            // A word with a scheme is a URI, never a file: an unknown scheme is refused naming those serve takes.
            "http://example.com/disk.img|NBD-URI http://example.com/disk.img: unknown URI scheme 'http'; pagewise knows nbd://",
            "nbd:/127.0.0.1/|NBD URI nbd:/127.0.0.1/ must begin with nbd://",
            "NBD://127.0.0.1/|schemes are lower case: nbd://",
            "backup-12:00.img|a file whose name has a colon is given as ./backup-12:00.img",
            "nbd+vsock:///x|NBD over vsock is not supported",
            "--create=1M|--create needs a FILE",
            "--tls=on|--tls=on needs --tls-certificates=DIR",
            "--tls=require|--tls=require needs --tls-certificates=DIR",
            "--tls=yes --tls-certificates=/tmp|--tls=yes: expected off, on or require",
            "--tls-certificates=/tmp|--tls-certificates needs --tls=on or --tls=require",
            "--tls-verify-peer|--tls-verify-peer needs --tls=on or --tls=require",
            "--tls-verify-peer=yes|--tls-verify-peer takes no value",
            "--tls=require --tls-psk=keys.psk|--tls-psk is not supported: the JDK's TLS has no pre-shared keys",
    })
    void badCommandLinesExitTwoNamingTheOption(String args, String named) {
        serve(args.split(" ")).assertStatus(2).assertErrContains(named);
    }

    @Test
    void namesAndDescriptionsOverTheProtocolsLimitAreUsageErrors() {
        String tooLong = "x".repeat(4097);
        for (String option : new String[] {"--export-name", "--description"}) {
            CommandRun outcome = serve(option + "=" + tooLong, "--create=1M", dir.resolve("never.img").toString());
            outcome.assertStatus(2).assertErrContains(option + " is 4097 bytes long");
            assertFalse(Files.exists(dir.resolve("never.img")), "a usage error must not create the file");
        }
    }

    @Test
    void badCertificatesDirectoryFailsBeforeTheFileIsCreated() throws Exception {
        Path certs = Files.createDirectories(dir.resolve("certs"));
        Files.writeString(certs.resolve("server-cert.pem"), "not a certificate\n");
        Path never = dir.resolve("never.img");
        CommandRun outcome = serve("--tls=require", "--tls-certificates=" + certs, "--create=1M", never.toString());
        outcome.assertStatus(1).assertErrContains(certs.resolve("server-cert.pem") + ": no PEM certificate");
        assertFalse(Files.exists(never), "a bad certificates directory must not create the file");
        Files.delete(certs.resolve("server-cert.pem"));
        outcome = serve("--tls=on", "--tls-certificates=" + certs, "--create=1M", never.toString());
        outcome.assertErrContains(certs.resolve("server-cert.pem") + ": missing");
    }

    @Test
    void runOverTlsGivesAnNbdsUriWithTheCertificates() throws Exception {
        requireTool("nbdinfo");
        io.pagewise.testing.TestCertificates certs = io.pagewise.testing.TestCertificates.make(dir.resolve("certs"));
        Path file = disk(1 << 20);
        for (String listen : new String[] {"--port=0", "--socket=" + dir.resolve("tls.sock")}) {
            CommandRun outcome = serve("--tls=require", "--tls-certificates=" + certs.all, "--tls-verify-peer", listen, "--run",
                    "case \"$uri\" in nbds*tls-certificates=" + certs.all + ") nbdinfo --size \"$uri\";; *) echo \"$uri\"; exit 9;; esac",
                    file.toString());
            outcome.assertOk();
        }
    }

    /** With an NBD URI, serve proxies that export: nbdcopy writes through it to the back server's file. */
    @Test
    void anNbdUriIsProxied() throws Exception {
        requireTool("nbdcopy");
        Path back = disk(4 << 20);
        byte[] data = new byte[4 << 20];
        new java.util.Random(5).nextBytes(data);
        Path source = dir.resolve("source.img");
        Files.write(source, data);
        try (io.pagewise.backends.FileDevice device = io.pagewise.backends.FileDevice.open(back,
                     io.pagewise.CacheMode.WRITEBACK, java.nio.file.StandardOpenOption.READ,
                     java.nio.file.StandardOpenOption.WRITE);
             io.pagewise.nbd.server.NbdServer upstream = io.pagewise.nbd.server.NbdServer.builder().export("", device)
                     .unixSocket(dir.resolve("back.sock"))
                     .logger(new io.pagewise.testing.RecordingLogger(null, System.Logger.Level.ERROR)).start()) {
            CommandRun copied = serve("--run", "nbdcopy " + source + " \"$uri\"", upstream.uri());
            copied.assertOk();
            assertTrue(java.util.Arrays.equals(data, Files.readAllBytes(back)), "the copy reached the back server's file");

            CommandRun refused = serve("-r", "--run", "nbdcopy " + source + " \"$uri\"", upstream.uri());
            assertTrue(refused.status() != 0, "-r makes the proxy read-only: " + refused.err());

            CommandRun usage = serve("--create=1M", upstream.uri());
            usage.assertStatus(2).assertErrContains("apply to a FILE");
        }
    }

    @Test
    void cacheNoneIsQemuNbdsDirectAndSaysSoNamingEvict() throws Exception {
        ServeOptions options = ServeCommand.parse(List.of("--cache=none", "x.img"));
        assertEquals(CacheMode.DIRECT, options.cache);
        String notices = String.join("\n", options.notices);
        assertTrue(notices.contains("--cache=direct") && notices.contains("--cache=evict"), notices);
        // copy has no qemu-nbd meaning to follow: there the word stays refused, naming both.
        UsageException refused = assertThrows(UsageException.class, () -> Arguments.cacheMode("--cache", "none"));
        assertTrue(refused.getMessage().contains("--cache=direct") && refused.getMessage().contains("--cache=evict"));
    }

    @Test
    void sizesTakeBinarySuffixes() throws Exception {
        assertEquals(4096, Arguments.size("--create", "4096"));
        assertEquals(64 << 10, Arguments.size("--create", "64K"));
        assertEquals(32L << 20, Arguments.size("--create", "32M"));
        assertEquals(1L << 30, Arguments.size("--create", "1G"));
        assertEquals(2L << 30, Arguments.size("--create", "2GiB"));
    }

    @Test
    void runExitsWithTheCommandsStatus() throws Exception {
        Path file = disk(1 << 20);
        assertEquals(3, serve("--run", "exit 3", file.toString()).status());
        CommandRun env = serve("--export-name=foo", "--run",
                "test -S \"$unixsocket\" && test \"$uri\" = \"$nbd\" && case \"$uri\" in "
                        + "\"nbd+unix:///foo?socket=$unixsocket\") exit 0;; *) echo \"$uri\"; exit 9;; esac",
                file.toString());
        env.assertOk();
    }

    @Test
    void runOverTcpAndIpv6() throws Exception {
        requireTool("nbdinfo");
        Path file = disk(1 << 20);
        CommandRun tcp = serve("--port=0", "--run", "test \"$port\" -gt 0 && nbdinfo --size \"$uri\" | grep -qx 1048576",
                file.toString());
        tcp.assertOk();
        CommandRun v6 = serve("--bind=::1", "--port=0", "--run",
                "case \"$uri\" in nbd://\\[::1\\]:*) nbdinfo --size \"$uri\";; *) exit 9;; esac", file.toString());
        if (v6.err().contains("Cannot assign requested address")) {
            ExternalTools.unavailable("no IPv6 loopback (::1) here: " + v6.err().strip(), "serving on ::1 must be tested");
        }
        v6.assertOk();
    }

    @Test
    void createMakesASparseFileAndStatsGoToAFile() throws Exception {
        requireTool("nbdinfo");
        Path file = dir.resolve("new.img");
        Path stats = dir.resolve("stats.txt");
        CommandRun outcome = serve("--create=8M", "--stats=" + stats, "--run",
                "nbdinfo --size \"$uri\"", file.toString());
        outcome.assertOk();
        assertEquals(8 << 20, Files.size(file));
        String blocks = ExternalTools.run(10, "stat", "-c", "%b", file.toString()).assertOk("stat").stdout().strip();
        assertEquals("0", blocks, "blocks allocated to the file --create made");
        String text = Files.readString(stats);
        assertTrue(text.contains("\nelapsed ") && text.contains("\nconnections: 1 "), text);
        assertEquals(io.pagewise.Native.isAvailable(), text.contains("page cache:"), text);
    }

    @Test
    void statsReportTheResidencyLeftAfterTheExportIsClosed() throws Exception {
        requireTool("nbdcopy");
        requireTool("vmtouch");
        if (!io.pagewise.Native.isAvailable()) {
            ExternalTools.unavailable("native library not loaded", "EVICT and the residency figure need it");
        }
        Path file = dir.resolve("data.img");
        byte[] data = new byte[64 << 20];
        new java.util.Random(8).nextBytes(data);
        Files.write(file, data);
        io.pagewise.PageCache.evict(file);
        Path stats = dir.resolve("stats.txt");
        // EVICT holds its last 8 windows (16 MiB) until the export is closed: 25 % of this file.
        CommandRun outcome = serve("--cache=evict", "--stats=" + stats, "--run", "nbdcopy \"$uri\" null:", file.toString());
        outcome.assertOk();
        String text = Files.readString(stats);
        java.util.regex.Matcher printed = java.util.regex.Pattern.compile("page cache: (\\d+)/(\\d+) pages").matcher(text);
        assertTrue(printed.find(), text);
        long resident = Long.parseLong(printed.group(1));
        long total = Long.parseLong(printed.group(2));
        assertTrue(resident <= total / 100, "--stats says " + resident + " of " + total + " pages stay cached:\n" + text);
        assertEquals(io.pagewise.PageCache.residency(file).residentPages(), resident, "mincore after exit");
        String vmtouch = ExternalTools.run(30, "vmtouch", file.toString()).assertOk("vmtouch").stdout();
        java.util.regex.Matcher measured = java.util.regex.Pattern.compile("Resident Pages: (\\d+)/").matcher(vmtouch);
        assertTrue(measured.find(), vmtouch);
        assertEquals(resident, Long.parseLong(measured.group(1)), "vmtouch after exit:\n" + vmtouch);
    }

    /** Writes a Python script of these lines into dir; {@return the command that runs it}, for --run. */
    private String pythonScript(String name, String... lines) throws IOException {
        String python = ExternalTools.python();
        Path script = dir.resolve(name);
        Files.writeString(script, String.join("\n", lines) + "\n");
        return python + " " + script;
    }

    /** {@link #pythonScript}, whose lines run with libnbd's handle h connected to the served export. */
    private String nbdScript(String name, String... lines) throws IOException {
        List<String> all = new java.util.ArrayList<>(List.of(
                "import errno, os, sys, time, nbd",
                "h = nbd.NBD()",
                "h.connect_uri(os.environ['uri'])"));
        all.addAll(List.of(lines));
        return pythonScript(name, all.toArray(String[]::new));
    }

    /**
     * Serves a 1 MiB disk with this timeout option to the client script of tests/nbd, which exits 0 only when the
     * server hung up on it; the server's stderr must say why.
     */
    private void assertServeDropsClient(String timeoutOption, String clientScript, String why) throws IOException {
        String script = ExternalTools.pythonScriptCommand(clientScript);
        serve(timeoutOption, "--run", script, disk(1 << 20).toString()).assertOk().assertErrContains(why);
    }

    @Test
    void handshakeTimeoutDropsASilentClient() throws Exception {
        assertServeDropsClient("--handshake-timeout=1", "silent_client.py", "handshake not finished within 1 s");
    }

    @Test
    void idleTimeoutClosesAClientThatSendsNothing() throws Exception {
        assertServeDropsClient("--idle-timeout=1", "idle_client.py", "closed after 1 s without requests (--idle-timeout)");
    }

    /**
     * Without -v a clean run prints nothing on stderr; -v adds each connection's export and every request, one plain
     * line each after "pagewise serve: ", as serve has always printed them.
     */
    @Test
    void verboseLogsEachConnectionAndRequestAsPlainLines() throws Exception {
        Path file = disk(1 << 20);
        String script = nbdScript("read.py",
                "assert h.pread(512, 4096) == bytes(512)",
                "h.shutdown()");
        CommandRun quiet = serve("--run", script, file.toString());
        quiet.assertOk();
        assertEquals("", quiet.err());

        CommandRun verbose = serve("-v", "--run", script, file.toString());
        verbose.assertOk();
        List<String> lines = verbose.err().lines().collect(java.util.stream.Collectors.toList());
        assertEquals("pagewise serve: connection 1: serving '' (" + file + " (writeback)), structured replies",
                lines.get(0), verbose.err());
        assertTrue(lines.stream().anyMatch(line -> line.matches("pagewise serve: connection 1: READ offset=4096 length=512"
                + " flags=0x0 cookie=\\d+ -> ok \\(\\d+\\.\\d{3} ms\\)")), verbose.err());
        for (String line : lines) assertTrue(line.startsWith("pagewise serve: connection 1: "), verbose.err());
    }

    @Test
    void readOnlyRefusesWritesFromTheCommandLine() throws Exception {
        Path file = disk(1 << 20);
        String script = ExternalTools.pythonScriptCommand("write_refused.py");
        CommandRun outcome = serve("-r", "--run", script, file.toString());
        assertEquals(0, outcome.status(), outcome.out() + outcome.err());
        assertEquals(0, Files.readAllBytes(file)[0]);
    }

    /** Starts {@code pagewise serve} in a JVM of its own, as bin/pagewise would. */
    private static Process child(Path workDir, String... args) throws IOException {
        return new ProcessBuilder(CommandRun.inOwnJvm("serve", args)).directory(workDir.toFile()).redirectError(workDir.resolve("stderr.txt").toFile()).start();
    }

    private static void awaitFile(Path path, Process process) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!Files.exists(path)) {
            if (!process.isAlive() || System.nanoTime() > deadline) fail(path + " never appeared");
            Thread.sleep(20);
        }
    }

    @Test
    void sigtermStopsCleanlyWithStatusZero() throws Exception {
        String python = ExternalTools.python();
        Path file = disk(4 << 20);
        Path socket = dir.resolve("s.sock");
        Process server = child(dir, "--socket=" + socket, "--stats", file.toString());
        try (BufferedReader out = new BufferedReader(new InputStreamReader(server.getInputStream(), StandardCharsets.UTF_8))) {
            String announced = out.readLine();
            assertTrue(announced != null && announced.startsWith("pagewise: serving"), String.valueOf(announced));
            awaitFile(socket, server);
            String uri = "nbd+unix:///?socket=" + socket;
            ExternalTools.run(java.util.Map.of("uri", uri), 30, python, "-c",
                    "import nbd, os; h = nbd.NBD(); h.connect_uri(os.environ['uri']); h.pwrite(b'kept' * 1024, 8192); h.shutdown()")
                    .assertOk("write before SIGTERM");
            server.destroy(); // SIGTERM
            assertTrue(server.waitFor(30, TimeUnit.SECONDS), "server did not stop");
            assertEquals(0, server.exitValue(), Files.readString(dir.resolve("stderr.txt")));
            assertFalse(Files.exists(socket), "socket file left behind");
            String err = Files.readString(dir.resolve("stderr.txt"));
            assertTrue(err.contains("\nelapsed ") && err.contains("\nwrite: calls=1 ") && err.contains("\nflush at shutdown: calls=1 "), err);
            assertTrue(err.contains("most requests in flight: 1\n"), err);
            assertEquals('k', Files.readAllBytes(file)[8192]);
        } finally {
            server.destroyForcibly();
        }
    }

    /**
     * A closing flush that fails: the error filter fails every flush with EIO. (A character device, whose fdatasync the
     * kernel refuses with EINVAL, is no longer served at all.)
     */
    private static final String FAILING_FLUSH = "--filter=error:rate=1,ops=flush,error=EIO";

    private Path unflushable() throws IOException {
        Path file = dir.resolve("unflushable.img");
        Files.write(file, new byte[4096]);
        return file;
    }

    @Test
    void sigtermAfterAFailedClosingFlushExitsNonZeroAndSaysWhat() throws Exception {
        Path socket = dir.resolve("s.sock");
        Path file = unflushable();
        Process server = child(dir, "--socket=" + socket, FAILING_FLUSH, file.toString());
        try (BufferedReader out = new BufferedReader(new InputStreamReader(server.getInputStream(), StandardCharsets.UTF_8))) {
            String announced = out.readLine();
            assertTrue(announced != null && announced.startsWith("pagewise: serving " + file), String.valueOf(announced));
            awaitFile(socket, server);
            server.destroy(); // SIGTERM
            assertTrue(server.waitFor(30, TimeUnit.SECONDS), "server did not stop");
            String err = Files.readString(dir.resolve("stderr.txt"));
            assertEquals(1, server.exitValue(), err);
            assertTrue(err.contains(file + " could not be flushed at exit: ") && err.contains("EIO"), err);
            assertFalse(Files.exists(socket), "socket file left behind");
        } finally {
            server.destroyForcibly();
        }
    }

    @Test
    void runWhoseClosingFlushFailsExitsNonZeroThoughTheCommandSucceeded() throws Exception {
        Path file = unflushable();
        CommandRun clean = serve("--run", "true", FAILING_FLUSH, file.toString());
        assertEquals(1, clean.status(), clean.out() + clean.err());
        clean.assertErrContains(file + " could not be flushed at exit: ");
        CommandRun failed = serve("--run", "exit 3", FAILING_FLUSH, file.toString());
        assertEquals(3, failed.status(), "the command's own status comes first: " + failed.err());
    }

    @Test
    void demoDiskIsFriendlyAndServesOneGib() throws Exception {
        requireTool("nbdinfo");
        Process server = child(dir, "--port=0");
        try (BufferedReader out = new BufferedReader(new InputStreamReader(server.getInputStream(), StandardCharsets.UTF_8))) {
            StringBuilder text = new StringBuilder();
            String uri = null;
            for (String line; (line = out.readLine()) != null; ) {
                text.append(line).append('\n');
                if (line.trim().startsWith("nbd://") && uri == null) uri = line.trim();
                if (line.contains("Ctrl-C")) break;
            }
            assertTrue(uri != null, text.toString());
            assertTrue(text.toString().contains("nbdinfo " + uri) && text.toString().contains("qemu-img info " + uri), text.toString());
            ProcessBuilder info = new ProcessBuilder("nbdinfo", "--size", uri);
            Process p = info.start();
            String size = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
            assertEquals(0, p.waitFor());
            assertEquals(String.valueOf(1L << 30), size);
            server.destroy();
            assertTrue(server.waitFor(30, TimeUnit.SECONDS));
            assertEquals(0, server.exitValue());
        } finally {
            server.destroyForcibly();
        }
    }
}

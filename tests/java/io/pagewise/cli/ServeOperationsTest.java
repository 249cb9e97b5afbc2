package io.pagewise.cli;

import static io.pagewise.testing.TestData.sparseFile;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.pagewise.testing.ExternalTools;
import io.pagewise.testing.TestCertificates;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@code pagewise serve} run as operators run nbdkit and qemu-nbd: several exports and a directory of
 * them, as a service (pid file, socket activation, exit with the parent, journal severities), live metrics, refused
 * container images, and who may connect. Each drives the real command: in-process through {@link Main#run} with
 * {@code --run}, or in a JVM of its own where the process itself matters.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class ServeOperationsTest {
    @TempDir
    Path dir;

    private static CommandRun serve(String... args) {
        return CommandRun.command("serve", args);
    }

    private Path image(String name, long size) throws IOException {
        Path file = dir.resolve(name);
        Files.createDirectories(file.getParent());
        return sparseFile(file, size);
    }

    /** A file that starts with a qcow2 header's magic and version. */
    private Path qcow2(String name) throws IOException {
        Path file = image(name, 1 << 20);
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
            raf.write(new byte[] {'Q', 'F', 'I', (byte) 0xfb, 0, 0, 0, 3});
        }
        return file;
    }

    /** The command that starts {@code pagewise serve} in a JVM of its own, as bin/pagewise would. */
    private static List<String> serveCommand(String... args) {
        return CommandRun.inOwnJvm("serve", args);
    }

    private Process start(List<String> command) throws IOException {
        return new ProcessBuilder(command).redirectOutput(dir.resolve("stdout.txt").toFile())
                .redirectError(dir.resolve("stderr.txt").toFile()).start();
    }

    private String childErr() throws IOException {
        Path err = dir.resolve("stderr.txt");
        return Files.exists(err) ? Files.readString(err) : "";
    }

    private void awaitFile(Path path, Process process) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!Files.exists(path)) {
            if (!process.isAlive() || System.nanoTime() > deadline) fail(path + " never appeared: " + childErr());
            Thread.sleep(20);
        }
    }

    /** nbdinfo --list's exports: name, then its lines up to the next export. */
    private static String exportBlock(String list, String name) {
        int start = list.indexOf("export=\"" + name + "\":");
        assertTrue(start >= 0, name + " in\n" + list);
        int end = list.indexOf("\nexport=", start + 1);
        return list.substring(start, end < 0 ? list.length() : end);
    }

    @Test
    void severalFilesAreExportsNamedAfterTheirFilesOrAsNameEqualsFileSays() throws Exception {
        ExternalTools.require("nbdinfo");
        Path vm1 = image("a/vm1.img", 1 << 20);
        Path vm2 = image("b/vm2.img", 2 << 20);
        Path odd = image("c/odd=name.img", 3 << 20);
        Path other = image("c/other.img", 4 << 20);
        Path list = dir.resolve("list.txt");
        Path size = dir.resolve("size.txt");
        // A / before the = makes it a FILE: an absolute path whose name has a = is a FILE.
        CommandRun outcome = serve("-r", "--default-export=vm2.img", vm1.toString(), vm2.toString(), odd.toString(),
                "backup=" + other, "--run",
                "nbdinfo --list \"$uri\" > " + list + " && nbdinfo --size \"nbd+unix:///?socket=$unixsocket\" > " + size
                        + " && test \"$exportname\" = vm2.img");
        outcome.assertOk();
        String text = Files.readString(list);
        String[][] expected = {{"vm1.img", vm1.toString(), "1048576"}, {"vm2.img", vm2.toString(), "2097152"},
                {"odd=name.img", odd.toString(), "3145728"}, {"backup", other.toString(), "4194304"}};
        for (String[] export : expected) {
            String block = exportBlock(text, export[0]);
            assertTrue(block.contains("description: " + export[1] + "\n"), block);
            assertTrue(block.contains("export-size: " + export[2] + " "), block);
            assertTrue(block.contains("is_read_only: true"), "-r applies to every export: " + block);
        }
        assertEquals(String.valueOf(2 << 20), Files.readString(size).trim(), "a client giving no name gets --default-export");
    }

    /** --export-name and --description name and describe a lone FILE beside --dir too (they were dropped there). */
    @Test
    void exportNameAndDescriptionApplyToALoneFileBesideADirectory() throws Exception {
        ExternalTools.require("nbdinfo");
        Path images = Files.createDirectories(dir.resolve("images"));
        image("images/in-dir.img", 1 << 20);
        Path lone = image("lone.img", 2 << 20);
        Path list = dir.resolve("list.txt");
        CommandRun outcome = serve("--export-name=foo", "--description=hello", "--dir=" + images, lone.toString(),
                "--run", "nbdinfo --list \"$uri\" > " + list);
        outcome.assertOk();
        String text = Files.readString(list);
        String block = exportBlock(text, "foo");
        assertTrue(block.contains("description: hello\n") && block.contains("export-size: 2097152 "), block);
        assertTrue(text.contains("export=\"in-dir.img\":"), text);
        assertFalse(text.contains("export=\"lone.img\":"), text);
    }

    /** A script for --run writing 64 KiB of 'x' at 64 KiB to the export named by its argument. */
    private Path writer() throws IOException {
        Path script = dir.resolve("write.py");
        Files.writeString(script, String.join("\n", "import nbd, os, sys",
                "h = nbd.NBD()",
                "h.connect_uri('nbd+unix:///' + sys.argv[1] + '?socket=' + os.environ['unixsocket'])",
                "h.pwrite(b'x' * 65536, 65536)",
                "h.flush()",
                "h.shutdown()") + "\n");
        return script;
    }

    /**
     * A script for --run that appends "EXPORT BITMAP BYTES" to a file: the bytes of the first MiB of the export
     * (argument 1) that the bitmap (argument 2) marks changed; argument 3 is the file.
     */
    private Path dirtyCounter() throws IOException {
        Path script = dir.resolve("dirty.py");
        Files.writeString(script, "import nbd, os, sys\n"
                + "h = nbd.NBD()\n"
                + "h.add_meta_context('qemu:dirty-bitmap:' + sys.argv[2])\n"
                + "h.connect_uri('nbd+unix:///' + sys.argv[1] + '?socket=' + os.environ['unixsocket'])\n"
                + "found = []\n"
                + "h.block_status(1 << 20, 0, lambda ctx, off, ents, err: found.extend(ents[i] for i in range(0, len(ents), 2) if ents[i + 1] & 1) or 0)\n"
                + "open(sys.argv[3], 'a').write(sys.argv[1] + ' ' + sys.argv[2] + ' ' + str(sum(found)) + '\\n')\n");
        return script;
    }

    /** --bitmap with several FILEs: each FILE has its own bitmap beside it, which records that FILE's writes only. */
    @Test
    void eachFileHasItsOwnBitmap() throws Exception {
        String python = ExternalTools.python();
        Path a = image("a.img", 1 << 20);
        Path c = image("c.img", 1 << 20);
        CommandRun outcome = serve("--bitmap=b", a.toString(), c.toString(), "--run", python + " " + writer() + " c.img");
        outcome.assertOk();
        assertTrue(Files.exists(dir.resolve("a.img.b.bitmap")) && Files.exists(dir.resolve("c.img.b.bitmap")),
                "a bitmap file beside each FILE");
        Path dirty = dir.resolve("dirty.txt");
        Path check = dirtyCounter();
        CommandRun read = serve("--bitmap=b", a.toString(), c.toString(), "--run",
                python + " " + check + " a.img b " + dirty + " && " + python + " " + check + " c.img b " + dirty);
        read.assertOk();
        assertEquals("a.img b 0\nc.img b 65536\n", Files.readString(dirty), "only c.img's bitmap recorded the write");
    }

    /**
     * --bitmap-clear=NAME starts a new generation of that bitmap alone and says what the old one held; a bitmap made
     * new says that it records from now on.
     */
    @Test
    void bitmapClearOfOneNameLeavesTheOthersAndSaysWhatItDropped() throws Exception {
        String python = ExternalTools.python();
        Path a = image("a.img", 1 << 20);
        CommandRun first = serve("--bitmap=daily", "--bitmap=weekly", a.toString(), "--run", python + " " + writer() + " ''");
        first.assertOk().assertErrContains("dirty bitmap daily (" + a + ".daily.bitmap): new: it records writes from now on");
        Path dirty = dir.resolve("dirty.txt");
        Path check = dirtyCounter();
        CommandRun cleared = serve("--bitmap=daily", "--bitmap=weekly", "--bitmap-clear=daily", a.toString(), "--run",
                python + " " + check + " '' daily " + dirty + " && " + python + " " + check + " '' weekly " + dirty);
        cleared.assertOk();
        assertEquals(" daily 0\n weekly 65536\n", Files.readString(dirty), "only daily was cleared");
        cleared.assertErrContains("dirty bitmap daily (" + a + ".daily.bitmap): cleared generation 1, which marked 64");
        assertTrue(!cleared.err().contains("new: it records") && !cleared.err().contains("weekly ("), cleared.err());
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "a/vm1.img b/vm1.img|export name 'vm1.img' is given twice ('a/vm1.img' and 'b/vm1.img')",
            "x=a.img x=b.img|export name 'x' is given twice ('a.img' and 'b.img')",
            "--export-name=x a.img b.img|--export-name names a lone FILE's export; with several FILEs, give NAME=FILE",
            "--description=d a.img b.img|--description describes a lone FILE's export",
            "--default-export=c a.img b.img|--default-export=c: no export of that name (the exports: a.img, b.img)",
            "x=|'x=': no FILE after NAME=",
            "a.img nbd://localhost/x|an NBD-URI is served alone",
            "--dir=/tmp nbd://localhost/x|--dir=/tmp cannot be combined with a proxied nbd://localhost/x",
            "--fork a.img|--fork is not offered: serve always runs in the foreground; run it under systemd",
            "--log=syslog a.img|--log=syslog: not offered (pagewise does not write to syslog(3) or /dev/log); under systemd use --log=journal",
            "--log=file a.img|--log=file: expected stderr or journal",
            "--metrics=9109 a.img|--metrics=9109: expected ADDR:PORT",
            "--metrics=127.0.0.1:http a.img|--metrics=127.0.0.1:http: the port must be a number",
            "--allow=10.0.0.0/8,bogus a.img|--allow=10.0.0.0/8,bogus: ",
            "--allow=10.0.0.0/8, a.img|--allow=10.0.0.0/8,: an empty entry in the list",
            "--allow-user=no-such-user-here a.img|--allow-user=no-such-user-here: ",
            "--allow=127.0.0.1 --socket=/tmp/s a.img|--allow lists TCP client addresses and --socket listens on a Unix socket",
            "--allow-user=root --port=1 a.img|--allow-user lists Unix-socket users and --port/--bind listen on TCP",
            "--tls-authz=/tmp/x a.img|--tls-authz needs --tls=require",
            "--tls=on --tls-certificates=/tmp --tls-authz=/tmp/x a.img|--tls-authz with --tls=on keeps out TLS clients it does not list but lets in any client without TLS: use --tls=require",
            "--group=root a.img|--group=root needs --user=USER",
            "--bitmap=b:file=/tmp/b.bitmap a.img c.img|--bitmap=b:file=/tmp/b.bitmap would be one bitmap file for 2 FILEs",
            "--bitmap=b --dir=/tmp|--bitmap applies to FILEs, not to the files of --dir=/tmp",
            "--bitmap=b --bitmap-clear=c a.img|--bitmap-clear=c: no --bitmap is named c (given: b)",
    })
    void badCommandLinesExitTwoNamingTheOptionAndValue(String args, String named) {
        serve(args.split(" ")).assertStatus(2).assertErrContains(named);
    }

    @Test
    void aLoneFileIsStillServedUnderTheEmptyNameAndForegroundIsAccepted() throws Exception {
        ExternalTools.require("nbdinfo");
        Path disk = image("disk.img", 1 << 20);
        CommandRun outcome = serve("--foreground", "--run", "test \"$exportname\" = '' && case \"$uri\" in"
                + " nbd+unix:///\\?socket=*) nbdinfo --size \"$uri\";; *) exit 9;; esac", disk.toString());
        outcome.assertOk();
    }

    @Test
    void aDirectoryIsServedWithFilesAddedLaterAndContainersRefusedToClients() throws Exception {
        ExternalTools.require("nbdinfo");
        Path images = Files.createDirectories(dir.resolve("images"));
        image("images/vm1.img", 1 << 20);
        qcow2("images/vm3.qcow2");
        image("images/.hidden.img", 1 << 20);
        Path before = dir.resolve("before.txt");
        Path after = dir.resolve("after.txt");
        Path qcow = dir.resolve("qcow2.txt");
        CommandRun outcome = serve("--dir=" + images, "--cache=evict", "--run",
                "nbdinfo --list \"$uri\" > " + before + " && truncate -s 2M " + images.resolve("vm2.img")
                        + " && nbdinfo --list \"$uri\" > " + after
                        + " && ! nbdinfo --size \"nbd+unix:///vm3.qcow2?socket=$unixsocket\" 2> " + qcow);
        outcome.assertOk();
        String first = Files.readString(before);
        assertTrue(exportBlock(first, "vm1.img").contains("export-size: 1048576 "), first);
        assertFalse(first.contains("export=\"vm2.img\""), first);
        assertFalse(first.contains("vm3.qcow2") || first.contains(".hidden.img"), "containers and dot files are not listed: " + first);
        String second = Files.readString(after);
        assertTrue(exportBlock(second, "vm2.img").contains("description: file, 2097152 bytes"), second);
        assertTrue(outcome.err().contains("vm3.qcow2, which starts with a QCOW2 signature") && outcome.err().contains("--force-raw"),
                "the refusal is logged: " + outcome.err());
    }

    @Test
    void aContainerFileIsRefusedUnlessForceRawAndThenServedWithAWarning() throws Exception {
        ExternalTools.require("nbdinfo");
        Path vm3 = qcow2("vm3.qcow2");
        CommandRun refused = serve("--run", "true", vm3.toString());
        refused.assertStatus(2);
        assertTrue(refused.err().contains("pagewise serve: not serving " + vm3 + ": it starts with a QCOW2 signature: clients would see")
                && refused.err().contains("qemu-img convert -f qcow2 -O raw")
                && refused.err().contains("--force-raw serves it raw anyway"), refused.err());

        CommandRun forced = serve("--force-raw", "--log=journal", "--run", "nbdinfo --size \"$uri\"", vm3.toString());
        forced.assertOk();
        assertTrue(forced.err().startsWith("<4>pagewise serve: " + vm3 + " starts with a QCOW2 signature: served raw"),
                forced.err());
    }

    /** --log=journal: every line on stderr starts with its syslog severity; -v's request lines are debug (7). */
    @Test
    void journalLogLinesCarrySeverities() throws Exception {
        ExternalTools.require("nbdinfo");
        Path disk = image("disk.img", 1 << 20);
        CommandRun outcome = serve("--log=journal", "-v", "--run", "nbdinfo --size \"$uri\" >/dev/null", disk.toString());
        outcome.assertOk();
        assertFalse(outcome.err().isEmpty());
        for (String line : outcome.err().split("\n")) {
            assertTrue(line.startsWith("<7>pagewise serve: connection 1: "), outcome.err());
        }
        CommandRun failed = serve("--log=journal", "--dir=" + dir.resolve("missing"));
        failed.assertStatus(1);
        assertEquals("<3>pagewise serve: --dir=" + dir.resolve("missing") + ": no such directory\n", failed.err());
    }

    @Test
    void metricsAreScrapedWithCurlAndPassPromtool() throws Exception {
        ExternalTools.require("curl", "promtool", "nbdcopy");
        Path vm1 = dir.resolve("vm1.img");
        byte[] data = new byte[4 << 20];
        new java.util.Random(22).nextBytes(data);
        Files.write(vm1, data); // data, not holes: nbdcopy reads it all
        for (String address : new String[] {"127.0.0.1:0", "[::1]:0"}) {
            Path metrics = dir.resolve("metrics.txt");
            Path check = dir.resolve("promtool.txt");
            CommandRun outcome = serve("--metrics=" + address, "vm1.img=" + vm1, "--run",
                    "nbdcopy \"$uri\" null: && curl -sSf \"$metrics\" > " + metrics
                            + " && promtool check metrics < " + metrics + " > " + check + " 2>&1");
            if (address.startsWith("[") && outcome.err().contains("Cannot assign requested address")) {
                ExternalTools.unavailable("no IPv6 loopback (::1) here: " + outcome.err().strip(), "metrics on ::1 must be tested");
            }
            assertEquals(0, outcome.status(), outcome.err() + (Files.exists(check) ? Files.readString(check) : ""));
            String text = Files.readString(metrics);
            Matcher bytes = Pattern.compile("(?m)^pagewise_nbd_request_bytes_total\\{export=\"vm1.img\",command=\"read\"\\} (\\S+)$")
                    .matcher(text);
            assertTrue(bytes.find(), text);
            assertEquals(4 << 20, (long) Double.parseDouble(bytes.group(1)));
        }
    }

    @Test
    void jmxBeansAreThereWhileServing() throws Exception {
        Path vm1 = image("vm1.img", 1 << 20);
        Path go = dir.resolve("go");
        Thread serving = new Thread(() -> serve("--jmx=cli-jmx-test", vm1.toString(), "--run",
                "while [ ! -e " + go + " ]; do sleep 0.05; done"));
        serving.start();
        try {
            javax.management.MBeanServer jmx = java.lang.management.ManagementFactory.getPlatformMBeanServer();
            javax.management.ObjectName bean = new javax.management.ObjectName("io.pagewise:type=NbdServer,name=\"cli-jmx-test\"");
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (!jmx.isRegistered(bean)) {
                if (System.nanoTime() > deadline) fail(bean + " never registered");
                Thread.sleep(20);
            }
            assertTrue(String.valueOf(jmx.getAttribute(bean, "Uri")).startsWith("nbd+unix:///?socket="));
        } finally {
            Files.writeString(go, "");
            serving.join(TimeUnit.SECONDS.toMillis(30));
        }
    }

    @Test
    void allowListsKeepOutTcpAddressesAndUnixSocketUsers() throws Exception {
        ExternalTools.require("nbdinfo");
        Path disk = image("disk.img", 1 << 20);
        CommandRun refused = serve("--port=0", "--allow=10.0.0.0/8,192.0.2.1", "--run", "! nbdinfo --size \"$uri\" 2>/dev/null",
                disk.toString());
        refused.assertOk().assertErrContains("is not in the allowed addresses [10.0.0.0/8, 192.0.2.1");
        CommandRun allowed = serve("--port=0", "--allow=10.0.0.0/8", "--allow=127.0.0.1", "--run", "nbdinfo --size \"$uri\"",
                disk.toString());
        allowed.assertOk();

        String me = System.getProperty("user.name");
        CommandRun otherUser = serve("--socket=" + dir.resolve("s.sock"), "--allow-user=65534", "--run",
                "! nbdinfo --size \"$uri\" 2>/dev/null", disk.toString());
        otherUser.assertOk().assertErrContains("user " + me + " is not an allowed user");
        CommandRun sameUser = serve("--socket=" + dir.resolve("s.sock"), "--allow-user=65534," + me, "--run",
                "nbdinfo --size \"$uri\"", disk.toString());
        sameUser.assertOk();
    }

    /** A --dir file whose name is not UTF-8 cannot be asked for: the server says so at start instead of never. */
    @Test
    void aDirFileWhoseNameCannotBeDecodedIsNamedAtStart() throws Exception {
        Path images = Files.createDirectories(dir.resolve("images"));
        image("images/plain.img", 1 << 20);
        // Made by the shell: Java cannot spell the byte 0xE9 alone in a file name.
        ExternalTools.run(10, "bash", "-c", "truncate -s 1M \"$0/caf$(printf '\\351').img\"", images.toString())
                .assertOk("make a file whose name is not UTF-8");
        CommandRun outcome = serve("--dir=" + images, "--run", "nbdinfo --list \"$uri\" >/dev/null || true");
        outcome.assertOk();
        assertTrue(outcome.err().contains(".img' is not served: its name is not valid in this locale's character set"),
                outcome.err());
        assertFalse(outcome.err().contains("plain.img"), "only the file that cannot be named: " + outcome.err());
    }

    @Test
    void tlsAuthzLetsInOnlyTheListedSubjects() throws Exception {
        ExternalTools.require("nbdinfo");
        TestCertificates certs = TestCertificates.make(dir.resolve("certs"));
        Path disk = image("disk.img", 1 << 20);
        Path authz = dir.resolve("authz.txt");
        Files.writeString(authz, "# only the EC client\nCN=ec client\n");
        // $uri names the server's own directory, whose client certificate is CN=client; the EC client's is listed.
        CommandRun outcome = serve("--tls=require", "--tls-certificates=" + certs.all, "--tls-authz=" + authz, "--run",
                "! nbdinfo --size \"$uri\" 2>/dev/null && nbdinfo --size \"nbds+unix:///?socket=$unixsocket&tls-certificates="
                        + certs.ecClient + "\"", disk.toString());
        outcome.assertOk();
        assertTrue(outcome.err().contains("CN=client"), "the refusal names the subject: " + outcome.err());

        Files.writeString(authz, "not a distinguished name\n");
        CommandRun bad = serve("--tls=require", "--tls-certificates=" + certs.all, "--tls-authz=" + authz, "--create=1M",
                dir.resolve("never.img").toString());
        bad.assertStatus(1).assertErrContains("--tls-authz=" + authz + ": " + authz + " line 1");
        assertFalse(Files.exists(dir.resolve("never.img")), "a bad allow-list is reported before FILE is created");
    }

    /** --pidfile appears once the server listens, names the process, and goes at exit (SIGTERM). */
    /**
     * A JVM whose direct memory (where request payloads live) is smaller than the in-flight budget: the budget is
     * lowered to fit, with a warning, and large writes from 4 connections at once all succeed. Before, payload
     * allocations failed with OutOfMemoryError in the middle of a request, and the next thread read the rest of its
     * payload as a request header.
     */
    @Test
    void anInflightBudgetAboveTheJvmsDirectMemoryIsLoweredAndLargeWritesSucceed() throws Exception {
        int size = 8 << 20;
        Path disk = image("disk.img", 4L * 4 * size);
        Path socket = dir.resolve("s.sock");
        Path pidFile = dir.resolve("serve.pid");
        List<String> command = serveCommand("--socket=" + socket, "--pidfile=" + pidFile, disk.toString());
        command.add(1, "-XX:MaxDirectMemorySize=24m");
        Process server = start(command);
        try {
            awaitFile(pidFile, server); // written once listening; the socket file appears at bind, before listen
            try (io.pagewise.nbd.client.NbdClient client = io.pagewise.nbd.client.NbdClient.connect(
                    "nbd+unix:///?socket=" + socket, 4)) {
                java.util.concurrent.ExecutorService writers = java.util.concurrent.Executors.newFixedThreadPool(4);
                try {
                    List<java.util.concurrent.Future<?>> done = new ArrayList<>();
                    for (int t = 0; t < 4; t++) {
                        int thread = t;
                        done.add(writers.submit(() -> {
                            java.nio.ByteBuffer data = java.nio.ByteBuffer.allocate(size);
                            for (int i = 0; i < 4; i++) {
                                long at = (thread * 4L + i) * size;
                                client.write(data.clear().putLong(0, at).putLong(size - 8, at).clear(), at);
                            }
                            return null;
                        }));
                    }
                    for (java.util.concurrent.Future<?> f : done) f.get(60, TimeUnit.SECONDS);
                } finally {
                    writers.shutdownNow();
                }
                java.nio.ByteBuffer back = java.nio.ByteBuffer.allocate(8);
                for (long at = 0; at < 16L * size; at += size) {
                    client.read(back.clear(), at + size - 8);
                    assertEquals(at, back.getLong(0), "the end of the write at " + at);
                }
            }
            String err = childErr();
            assertTrue(err.contains("in-flight bytes lowered to 12582912 from 67108864"), err);
            assertFalse(err.contains("OutOfMemoryError"), err);
        } finally {
            ExternalTools.stop(server);
        }
    }

    @Test
    void pidFileIsWrittenOnceListeningAndRemovedAtExit() throws Exception {
        Path disk = image("disk.img", 1 << 20);
        Path socket = dir.resolve("s.sock");
        Path pidFile = dir.resolve("serve.pid");
        Process server = start(serveCommand("--socket=" + socket, "--pidfile=" + pidFile, disk.toString()));
        try {
            awaitFile(pidFile, server);
            assertTrue(Files.exists(socket), "listening before the pid file appears");
            assertEquals(server.pid() + "\n", Files.readString(pidFile));
            server.destroy();
            assertTrue(server.waitFor(30, TimeUnit.SECONDS));
            assertEquals(0, server.exitValue(), childErr());
            assertFalse(Files.exists(pidFile), "the pid file is removed at exit");
        } finally {
            ExternalTools.stop(server);
        }
    }

    @Test
    void exitsWithItsParent() throws Exception {
        Path disk = image("disk.img", 1 << 20);
        Path socket = dir.resolve("s.sock");
        Path pidFile = dir.resolve("serve.pid");
        StringBuilder line = new StringBuilder();
        for (String arg : serveCommand("--exit-with-parent", "--socket=" + socket, "--pidfile=" + pidFile, disk.toString())) {
            line.append('\'').append(arg).append("' ");
        }
        Process parent = start(List.of("bash", "-c", line + "& wait"));
        ProcessHandle server = null;
        try {
            awaitFile(pidFile, parent);
            server = ProcessHandle.of(Long.parseLong(Files.readString(pidFile).trim())).orElseThrow();
            parent.destroyForcibly();
            parent.waitFor(10, TimeUnit.SECONDS);
            try {
                server.onExit().get(30, TimeUnit.SECONDS);
            } catch (java.util.concurrent.TimeoutException e) {
                fail("the server outlived its parent by 30 s: " + childErr());
            }
            assertFalse(Files.exists(socket), "SIGTERM stopped the server cleanly: its socket is gone");
            assertFalse(Files.exists(pidFile), "and its pid file");
        } finally {
            ExternalTools.stop(parent);
            if (server != null) server.destroyForcibly(); // the orphan, when the test failed
        }
    }

    /**
     * The unit file's ExecStart, run as systemd would run it: under systemd-socket-activate on a Unix socket (its
     * --dir pointed at a temp dir, its metrics on a free port). The server takes the socket it is given, serves the
     * directory, and logs with severities.
     */
    @Test
    void theServiceUnitsCommandServesOnTheActivatedSocket() throws Exception {
        ExternalTools.require("systemd-socket-activate", "nbdinfo", "curl");
        List<String> exec = execStart();
        assertEquals("/opt/pagewise/bin/pagewise", exec.get(0));
        assertEquals("serve", exec.get(1));
        Path images = Files.createDirectories(dir.resolve("images"));
        image("images/vm1.img", 1 << 20);
        int port;
        try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = probe.getLocalPort();
        }
        List<String> args = new ArrayList<>();
        for (String arg : exec.subList(2, exec.size())) {
            // The unit's socket is TCP; this test activates a Unix one, where --allow is refused (--allow-user is its kind).
            if (arg.startsWith("--allow=")) continue;
            if (arg.startsWith("--dir=")) arg = "--dir=" + images;
            if (arg.startsWith("--metrics=")) arg = "--metrics=127.0.0.1:" + port;
            args.add(arg);
        }
        Path pidFile = dir.resolve("serve.pid");
        args.add("--pidfile=" + pidFile);
        args.add("-v");
        Path socket = dir.resolve("act.sock");
        Process process = start(ExternalTools.socketActivated(socket.toString(), serveCommand(args.toArray(String[]::new))));
        try {
            awaitFile(socket, process);
            ExternalTools.assertExportSize("nbd+unix:///vm1.img?socket=" + socket, 1 << 20);
            assertEquals(process.pid() + "\n", Files.readString(pidFile), "systemd-socket-activate execs the server");
            String metrics = ExternalTools.run(30, "curl", "-sSf", "http://127.0.0.1:" + port + "/metrics")
                    .assertOk("curl").stdout();
            assertTrue(metrics.contains("pagewise_nbd_handshakes_total 1"), metrics);
            String announced = Files.readString(dir.resolve("stdout.txt"));
            assertTrue(announced.contains("pagewise: serving the files of " + images + " (cache=evict) at nbd+unix:///NAME?socket="
                    + socket + "\n") && announced.contains("pagewise: metrics at http://127.0.0.1:" + port + "/metrics\n"), announced);
        } finally {
            ExternalTools.stop(process);
        }
        assertTrue(Files.exists(socket), "the socket file is systemd's: the server leaves it");
        String err = childErr();
        assertTrue(err.contains("<7>pagewise serve: connection 1: serving 'vm1.img'"), err);
        for (String line : err.split("\n")) {
            if (!line.startsWith("Listening on") && !line.startsWith("Communication attempt") && !line.startsWith("Execing")
                    && !line.startsWith("Received")) {
                assertTrue(line.matches("<[3-7]>pagewise serve: .*"), "a line without severity: " + line + "\n" + err);
            }
        }
    }

    /**
     * The unit's sandbox as systemd makes it: ProtectSystem=strict mounts /tmp read-only, where the JVM unpacks the
     * native library (socket activation needs it), and PrivateTmp=yes mounts a writable /tmp of the unit's own over
     * it. Without PrivateTmp the library did not load (a helper found it with unshare, as here).
     */
    @Test
    void theServiceUnitsSandboxLetsTheNativeLibraryLoad() throws Exception {
        ExternalTools.require("unshare");
        if (ServeOptions.effectiveUid() != 0) ExternalTools.unavailable("mounting needs root", "the CI runs as root");
        String unit = Files.readString(Path.of(System.getProperty("user.dir"), "docs", "systemd", "pagewise-nbd.service"));
        StringBuilder mounts = new StringBuilder();
        if (unit.contains("\nProtectSystem=strict\n")) mounts.append("mount -t tmpfs -o ro tmpfs /tmp && ");
        if (unit.contains("\nPrivateTmp=yes\n")) mounts.append("mount -t tmpfs tmpfs /tmp && ");
        // The classes stay in sight through a bind mount outside /tmp: the checkout itself may be under /tmp.
        String classes = Path.of(System.getProperty("user.dir"), "target", "classes").toString();
        Path visible = Files.createTempDirectory(Path.of("/var/tmp"), "pagewise-unit-classes-");
        try {
            List<String> launcher = new ArrayList<>(serveCommand());
            launcher.replaceAll(arg -> arg.equals(classes) ? visible.toString() : arg);
            String version = String.join(" ", launcher.subList(0, launcher.size() - 1)) + " --version";
            ExternalTools.Result run = ExternalTools.run(60, "unshare", "-m", "--propagation", "private", "sh", "-c",
                    "mount --bind " + classes + " " + visible + " && " + mounts + "exec " + version);
            assertTrue(run.stdout().contains("native library: loaded"), "in the unit's sandbox (" + mounts + "): "
                    + run.stdout() + run.stderr());
        } finally {
            Files.deleteIfExists(visible);
        }
    }

    /** The ExecStart of docs/systemd/pagewise-nbd.service, its continuation lines joined, split at spaces. */
    private static List<String> execStart() throws IOException {
        String unit = Files.readString(Path.of(System.getProperty("user.dir"), "docs", "systemd", "pagewise-nbd.service"));
        Matcher m = Pattern.compile("(?m)^ExecStart=((?:.*\\\\\n)*.*)$").matcher(unit);
        assertTrue(m.find(), unit);
        return List.of(m.group(1).replace("\\\n", " ").trim().split("\\s+"));
    }

    @Test
    void socketActivationWithListenOptionsOrAnAddressListForAUnixSocketIsAMistake() throws Exception {
        ExternalTools.require("systemd-socket-activate", "nbdinfo");
        Path disk = image("disk.img", 1 << 20);
        refusedUnderActivation(disk, "act.sock", "--port=10", "socket activation (LISTEN_PID, LISTEN_FDS) passed the"
                + " socket to listen on: --socket, --port and --bind cannot be given with it");
        // As with --socket: --allow names TCP addresses, which a Unix socket's clients have none of.
        refusedUnderActivation(disk, "act2.sock", "--allow=127.0.0.1", "--allow lists TCP client addresses and socket"
                + " activation passed a Unix socket: use --allow-user");
    }

    private void refusedUnderActivation(Path disk, String socketName, String option, String message) throws Exception {
        Path socket = dir.resolve(socketName);
        Process process = start(ExternalTools.socketActivated(socket.toString(), serveCommand(option, disk.toString())));
        try {
            awaitFile(socket, process);
            ExternalTools.run(60, "nbdinfo", "--size", "nbd+unix:///?socket=" + socket); // starts the server, which refuses
            assertTrue(process.waitFor(60, TimeUnit.SECONDS), childErr());
            assertEquals(2, process.exitValue(), childErr());
            assertTrue(childErr().contains(message), childErr());
        } finally {
            ExternalTools.stop(process);
        }
    }

    /** The threads of a process whose user or group ids are not all 65534, with those lines. */
    /**
     * Waits until every thread of the server runs as 65534: dropPrivileges runs right after the pid file is written,
     * and the C library changes the threads one by one (fails if one never is).
     */
    private void awaitPrivilegesDropped(Process server) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        for (List<String> root = rootTasks(server); !root.isEmpty(); root = rootTasks(server)) {
            if (System.nanoTime() > deadline) fail("threads still not 65534 after 30 s: " + root + " " + childErr());
            Thread.sleep(20);
        }
    }

    private static List<String> rootTasks(Process server) throws IOException {
        List<String> left = new java.util.ArrayList<>();
        try (var tasks = Files.list(Path.of("/proc/" + server.pid() + "/task"))) {
            for (Path task : (Iterable<Path>) tasks::iterator) {
                for (String line : Files.readAllLines(task.resolve("status"))) {
                    if ((line.startsWith("Uid:") || line.startsWith("Gid:"))
                            && !line.matches("(Uid|Gid):\\s+65534\\s+65534\\s+65534\\s+65534")) {
                        left.add(task.getFileName() + " " + line);
                    }
                }
            }
        }
        return left;
    }

    /** As root: --user drops to that user once listening, every thread; the socket bound as root still serves. */
    @Test
    void userDropsRootAfterBinding() throws Exception {
        ExternalTools.require("nbdinfo");
        if (ServeOptions.effectiveUid() != 0) {
            ExternalTools.unavailable("dropping privileges needs root", "the CI runs as root");
        }
        Path disk = image("disk.img", 1 << 20);
        Path socket = dir.resolve("s.sock");
        Path pidFile = dir.resolve("serve.pid");
        Process server = start(serveCommand("--user=65534", "--group=65534", "--socket=" + socket, "--pidfile=" + pidFile,
                disk.toString()));
        try {
            awaitFile(pidFile, server);
            awaitPrivilegesDropped(server);
            ExternalTools.run(30, "nbdinfo", "--size", "nbd+unix:///?socket=" + socket).assertOk("nbdinfo after the drop");
            // SIGTERM: the flush succeeds; the socket file, made as root in a directory of root's, stays with a
            // warning, which is no failure of the stop (it used to exit 1 saying writes may be lost).
            server.destroy();
            assertTrue(server.waitFor(30, TimeUnit.SECONDS), "no exit after SIGTERM");
            String err = childErr();
            assertEquals(0, server.exitValue(), err);
            assertTrue(err.contains("cannot remove the socket file " + socket + ": permission denied"), err);
            assertFalse(err.contains("could not be flushed"), err);
        } finally {
            ExternalTools.stop(server);
        }
    }

    /** A file of --dir that --user may not read: the client is refused, and the operator told why. */
    @Test
    void aDirectoryFileTheUserCannotReadIsRefusedSayingWhy() throws Exception {
        ExternalTools.require("nbdinfo");
        if (ServeOptions.effectiveUid() != 0) {
            ExternalTools.unavailable("dropping privileges needs root", "the CI runs as root");
        }
        Files.setPosixFilePermissions(dir, java.nio.file.attribute.PosixFilePermissions.fromString("rwx--x--x"));
        Path images = Files.createDirectories(dir.resolve("images"));
        Files.setPosixFilePermissions(images, java.nio.file.attribute.PosixFilePermissions.fromString("rwxr-xr-x"));
        Path secret = image("images/secret.img", 1 << 20);
        Files.setPosixFilePermissions(secret, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
        Path socket = dir.resolve("s.sock");
        Path pidFile = dir.resolve("serve.pid");
        Process server = start(serveCommand("--user=65534", "--group=65534", "--socket=" + socket, "--pidfile=" + pidFile,
                "--dir=" + images));
        try {
            awaitFile(pidFile, server);
            awaitPrivilegesDropped(server);
            ExternalTools.Result info = ExternalTools.run(30, "nbdinfo", "--size", "nbd+unix:///secret.img?socket=" + socket);
            assertTrue(info.status() != 0, "served a file its user cannot read: " + info.stdout());
            assertFalse(info.stderr().contains(images.toString()), "the server's path reached the client: " + info.stderr());
            String err = childErr();
            assertTrue(err.contains(": export 'secret.img' cannot be opened: " + secret + ": ")
                    && err.toLowerCase(java.util.Locale.ROOT).contains("permission denied"), err);
        } finally {
            ExternalTools.stop(server);
        }
    }

    /** Not root: --user is refused, saying why, before anything is served. */
    @Test
    void userWithoutRootIsRefused() throws Exception {
        if (ServeOptions.effectiveUid() == 0) {
            ExternalTools.require("setpriv");
            List<String> command = new ArrayList<>(List.of("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"));
            command.addAll(serveCommand("--user=root", "disk.img"));
            ExternalTools.Result r = ExternalTools.run(60, command.toArray(String[]::new));
            assertEquals(2, r.status(), r.stderr());
            assertTrue(r.stderr().contains("pagewise serve: --user=root needs root, to change user once listening; this"
                    + " process runs as uid 65534"), r.stderr());
        } else {
            CommandRun outcome = serve("--user=root", "disk.img");
            outcome.assertStatus(2).assertErrContains("--user=root needs root");
        }
    }
}

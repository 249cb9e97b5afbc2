package io.pagewise.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.CacheMode;
import io.pagewise.backends.FileDevice;
import io.pagewise.nbd.server.NbdServer;
import io.pagewise.testing.ExternalTools;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code pagewise checksum} and {@code pagewise copy --checksum} print what blksum prints, for files, sparse images and
 * NBD exports, and name what was wrong when they cannot.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class ChecksumCommandTest {
    @TempDir
    Path dir;

    @Test
    void copyToNullNamesTheSourceItsChecksumDescribes() throws IOException {
        Path image = sparseImage("image.raw", 1 << 20, 9);
        CommandRun alone = CommandRun.of("checksum", image.toString());
        alone.assertOk();
        CommandRun copied = CommandRun.of("copy", "--checksum", image.toString(), "null:");
        copied.assertOk();
        assertEquals(alone.out(), copied.out(), "the same line as pagewise checksum SRC");
        // A larger DST keeps its bytes past SRC's size, which the checksum does not cover: the line names SRC.
        Path larger = dir.resolve("larger.raw");
        try (java.io.RandomAccessFile raf = new java.io.RandomAccessFile(larger.toFile(), "rw")) {
            raf.setLength((1 << 20) + 65536);
        }
        CommandRun intoLarger = CommandRun.of("copy", "--checksum", image.toString(), larger.toString());
        intoLarger.assertOk();
        assertEquals(alone.out(), intoLarger.out(), "the checksum of SRC's bytes, named SRC");
        Path same = dir.resolve("same.raw");
        CommandRun intoSame = CommandRun.of("copy", "--checksum", image.toString(), same.toString());
        assertEquals(alone.out().replace(image.toString(), same.toString()), intoSame.out(), "a DST of SRC's size is named");
        assertEquals(CommandRun.of("checksum", same.toString()).out(), intoSame.out());
    }

    /** Random data runs, zeros written as data and holes. */
    private Path sparseImage(String name, long size, long seed) throws IOException {
        Path path = dir.resolve(name);
        Random random = new Random(seed);
        try (RandomAccessFile file = new RandomAccessFile(path.toFile(), "rw")) {
            file.setLength(size);
            byte[] run = new byte[200_000];
            for (int i = 0; i < 30; i++) {
                int length = 1 + random.nextInt(run.length);
                random.nextBytes(run);
                if (i % 4 == 0) java.util.Arrays.fill(run, (byte) 0);
                file.seek(Math.floorMod(random.nextLong(), size - length));
                file.write(run, 0, length);
            }
        }
        return path;
    }

    private static String blksum(String... args) throws IOException {
        List<String> command = new java.util.ArrayList<>(List.of(ExternalTools.blksum().toString()));
        command.addAll(List.of(args));
        return ExternalTools.run(120, command.toArray(new String[0])).assertOk("blksum").stdout().trim();
    }

    @Test
    void filesPrintAsBlksumPrintsThem() throws IOException {
        ExternalTools.require("qemu-nbd"); // blksum reads files through qemu-nbd
        Path a = sparseImage("a.raw", 48L << 20, 1);
        Path b = sparseImage("b.raw", (3L << 20) + 512, 2);
        CommandRun run = CommandRun.of("checksum", a.toString(), b.toString());
        run.assertOk();
        assertEquals(blksum(a.toString()) + "\n" + blksum(b.toString()) + "\n", run.out());

        CommandRun sha1 = CommandRun.of("checksum", "-d", "sha1", "-t", "1", "--cache=writeback", a.toString());
        sha1.assertOk();
        assertEquals(blksum("--digest=sha1", a.toString()) + "\n", sha1.out());
    }

    @Test
    void anNbdExportPrintsAsBlksumPrintsItsUri() throws IOException {
        Path image = sparseImage("export.raw", 32L << 20, 3);
        try (FileDevice device = FileDevice.open(image, CacheMode.EVICT);
             NbdServer server = NbdServer.builder().export("", device).unixSocket(dir.resolve("nbd.sock")).start()) {
            CommandRun run = CommandRun.of("checksum", "-C", "2", server.uri());
            run.assertOk();
            assertEquals(blksum(server.uri()) + "\n", run.out());
        }
    }

    /** copy --checksum prints the checksum of what DST now holds, the line checksum prints for DST. */
    @Test
    void copyPrintsTheChecksumOfWhatItCopied() throws IOException {
        ExternalTools.require("qemu-nbd");
        Path source = sparseImage("source.raw", 40L << 20, 4);
        Path copy = dir.resolve("copy.raw");
        CommandRun run = CommandRun.of("copy", "--checksum", source.toString(), copy.toString());
        run.assertOk();
        String expected = blksum(source.toString()).split("\\s+")[0];
        assertEquals(expected + "  " + copy + "\n", run.out());
        assertEquals(expected + "  " + copy + "\n", CommandRun.of("checksum", copy.toString()).out());

        Path sha512 = dir.resolve("sha512.raw");
        CommandRun other = CommandRun.of("copy", "--checksum=sha512", "-R", "3", "--request-size=64K", source.toString(),
                sha512.toString());
        other.assertOk();
        assertEquals(blksum("--digest=sha512", source.toString()).split("\\s+")[0] + "  " + sha512 + "\n", other.out());
    }

    @Test
    void aContainerFileIsRefusedUnlessForceRawAndThenHashedAsItsBytes() throws IOException {
        Path raw = sparseImage("image.raw", 1 << 20, 3);
        Path qcow2 = sparseImage("image.qcow2", 1 << 20, 4);
        try (RandomAccessFile file = new RandomAccessFile(qcow2.toFile(), "rw")) {
            file.write(new byte[] {'Q', 'F', 'I', (byte) 0xfb, 0, 0, 0, 3});
        }
        CommandRun refused = CommandRun.of("checksum", raw.toString(), qcow2.toString());
        refused.assertStatus(2);
        assertEquals("", refused.out(), "nothing is hashed when an IMAGE is refused");
        String line = refused.err().lines().findFirst().orElse("");
        assertTrue(line.startsWith("pagewise checksum: IMAGE " + qcow2 + " starts with a QCOW2 signature")
                && line.contains("qemu-img convert -f qcow2 -O raw") && line.contains("--force-raw"), refused.err());

        CommandRun forced = CommandRun.of("checksum", "--force-raw", qcow2.toString());
        forced.assertOk();
        String expected;
        try (FileDevice device = FileDevice.open(qcow2, CacheMode.WRITEBACK)) {
            expected = io.pagewise.copy.BlockHash.hex(io.pagewise.copy.Checksums.of(device,
                    io.pagewise.copy.BlockHash.sha256(), 1));
        }
        assertEquals(expected + "  " + qcow2 + "\n", forced.out());
    }

    @Test
    void lookingForAContainerSignatureLeavesThePageCacheAsItWas() throws IOException {
        ExternalTools.requireNativeLibrary();
        byte[] data = new byte[1 << 20];
        new Random(7).nextBytes(data);
        Path image = Files.write(dir.resolve("image.raw"), data);
        Path existing = Files.write(dir.resolve("existing.raw"), data);
        io.pagewise.PageCache.evict(image);
        io.pagewise.PageCache.evict(existing);
        // The header is read as the command reads the file: with O_DIRECT by checksum, nothing at all is cached.
        CommandRun checksum = CommandRun.of("checksum", image.toString());
        checksum.assertOk();
        assertEquals(0, io.pagewise.PageCache.residency(image).residentPages(), "checksum left pages of " + image);
        // copy's default (evict) drops what it read of SRC and of a DST that existed, header included.
        CommandRun copy = CommandRun.of("copy", image.toString(), existing.toString());
        copy.assertOk();
        io.pagewise.testing.ResidencyCheck.assertAtMostOnePercent(image, "source");
        io.pagewise.testing.ResidencyCheck.assertAtMostOnePercent(existing, "destination");
    }

    @Test
    void aQcow2ImageFromQemuImgIsRefused() throws IOException {
        ExternalTools.require("qemu-img");
        Path qcow2 = dir.resolve("vm.qcow2");
        ExternalTools.run(30, "qemu-img", "create", "-f", "qcow2", qcow2.toString(), "16M").assertOk("qemu-img create");
        CommandRun refused = CommandRun.of("checksum", qcow2.toString());
        refused.assertStatus(2);
        assertTrue(refused.err().startsWith("pagewise checksum: IMAGE " + qcow2 + " starts with a QCOW2 signature"),
                refused.err());
        assertEquals(0, CommandRun.of("checksum", "--force-raw", qcow2.toString()).status());
    }

    @Test
    void aUriIsRecognisedBeforeAnyPath() {
        CommandRun http = CommandRun.of("checksum", "http://example.com/disk.img");
        http.assertStatus(2);
        assertTrue(http.err().startsWith("pagewise checksum: IMAGE http://example.com/disk.img: unknown URI scheme 'http'")
                && http.err().contains("nbd+unix://"), http.err());
        CommandRun nbd = CommandRun.of("checksum", "nbd:/127.0.0.1/");
        nbd.assertStatus(2);
        assertTrue(nbd.err().startsWith("pagewise checksum: IMAGE: NBD URI nbd:/127.0.0.1/ must begin with nbd://"), nbd.err());
    }

    @Test
    void mistakesAreNamed() throws IOException {
        Path image = sparseImage("image.raw", 1 << 20, 5);
        CommandRun digest = CommandRun.of("checksum", "--digest=sha999", image.toString());
        assertEquals(2, digest.status());
        assertTrue(digest.err().startsWith("pagewise checksum: --digest=sha999: unknown digest 'sha999'"), digest.err());
        assertEquals("", digest.out());

        CommandRun none = CommandRun.of("checksum");
        assertEquals(2, none.status());
        assertTrue(none.err().startsWith("pagewise checksum: no IMAGE given"), none.err());

        CommandRun blockSize = CommandRun.of("checksum", "--block-size=1000", image.toString());
        assertEquals(2, blockSize.status());
        blockSize.assertErrContains("--block-size=1000: expected a multiple of 512");

        // A missing file fails on its own line; the others are still printed.
        Path missing = dir.resolve("missing.raw");
        CommandRun partly = CommandRun.of("checksum", missing.toString(), image.toString());
        assertEquals(1, partly.status());
        assertTrue(partly.err().startsWith("pagewise checksum: " + missing + ": "), partly.err());
        assertTrue(partly.err().contains("no such file") || partly.err().contains("No such file"), partly.err());
        assertTrue(partly.out().matches("[0-9a-f]{64}  " + java.util.regex.Pattern.quote(image.toString()) + "\n"),
                partly.out());

        CommandRun stream = CommandRun.of("copy", "--checksum", image.toString(), "-");
        assertEquals(2, stream.status());
        stream.assertErrContains("--checksum needs SRC and DST that are files");
        CommandRun withChanged = CommandRun.of("copy", "--checksum", "--changed=b", "nbd+unix:///?socket=/nonexistent", image.toString());
        assertEquals(2, withChanged.status());
        withChanged.assertErrContains("--changed cannot be combined with --checksum");
        CommandRun badCopyDigest = CommandRun.of("copy", "--checksum=nope", image.toString(), dir.resolve("x").toString());
        assertEquals(2, badCopyDigest.status());
        badCopyDigest.assertErrContains("--checksum=nope: unknown digest 'nope'");
        assertTrue(Files.notExists(dir.resolve("x")), "a usage mistake creates nothing");
    }
}

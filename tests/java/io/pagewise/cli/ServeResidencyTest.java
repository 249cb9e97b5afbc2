package io.pagewise.cli;


import io.pagewise.PageCache;
import io.pagewise.testing.ExternalTools;
import io.pagewise.testing.LoopMounts;
import io.pagewise.testing.ResidencyCheck;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code pagewise serve} in each clean cache mode leaves at most 1 % of the served file in the page cache once it
 * stops, after a real client wrote all of it (nbdcopy) and after another read all of it (qemu-img): in the temporary
 * directory, and on ext4, XFS and btrfs made on loop devices (btrfs buffers O_DIRECT writes).
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class ServeResidencyTest {
    private static final int SIZE = 128 << 20;
    /** Smaller on the loop mounts, which run twelve times: 1 % of it is still 164 pages. */
    private static final int LOOP_SIZE = 64 << 20;
    private static final List<String> CLEAN_MODES = List.of("evict", "dontcache", "direct", "directsync");

    @RegisterExtension
    static final LoopMounts MOUNTS = new LoopMounts();

    @TempDir
    Path dir;

    /** Runs {@code pagewise serve --cache=MODE --run=CLIENT FILE} in this JVM until the client exits. */
    private static void serve(String mode, String client, String... more) {
        String[] args = new String[2 + more.length];
        args[0] = "--cache=" + mode;
        args[1] = "--run=" + client;
        System.arraycopy(more, 0, args, 2, more.length);
        CommandRun.command("serve", args).assertOk();
    }

    @ParameterizedTest
    @ValueSource(strings = {"evict", "dontcache", "direct", "directsync"})
    void aServedFileStaysOutOfThePageCache(String mode) throws Exception {
        writeAndReadThroughServe(mode, dir, "", SIZE);
    }

    static Stream<Arguments> fileSystemsAndCleanModes() {
        List<Arguments> cases = new ArrayList<>();
        for (String type : LoopMounts.TYPES) for (String mode : CLEAN_MODES) cases.add(Arguments.of(type, mode));
        return cases.stream();
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("fileSystemsAndCleanModes")
    void aServedFileStaysOutOfThePageCacheOnEachFileSystem(String type, String mode) throws Exception {
        writeAndReadThroughServe(mode, MOUNTS.directory(type), type + " ", LOOP_SIZE);
    }

    /** nbdcopy writes a file in servedDir through serve, qemu-img reads it back; each leaves ≤ 1 % cached. */
    private void writeAndReadThroughServe(String mode, Path servedDir, String where, int size) throws Exception {
        ExternalTools.requireNativeLibrary();
        ExternalTools.require("nbdcopy", "qemu-img", "cmp", "vmtouch");
        Path source = dir.resolve("source.img");
        try (OutputStream out = Files.newOutputStream(source)) {
            Random random = new Random(17);
            byte[] chunk = new byte[1 << 20];
            for (int i = 0; i < size / chunk.length; i++) {
                random.nextBytes(chunk);
                out.write(chunk);
            }
        }
        Path served = servedDir.resolve("served.img");
        try {
            serveAndCheck(mode, source, served, where, size);
        } finally {
            Files.deleteIfExists(served); // the loop mounts hold a few of these at most
        }
    }

    private void serveAndCheck(String mode, Path source, Path served, String where, int size) throws Exception {
        serve(mode, "nbdcopy --flush '" + source + "' \"$uri\"", "--create=" + size, served.toString());
        ResidencyCheck.assertAtMostOnePercent(served, where + mode + ", after nbdcopy wrote it through pagewise serve");

        PageCache.evict(served); // what EVICT finds cached at open it leaves cached: start cold
        Path back = dir.resolve("back.img");
        serve(mode, "qemu-img convert -f raw -O raw \"$uri\" '" + back + "'", served.toString());
        ResidencyCheck.assertAtMostOnePercent(served, where + mode + ", after qemu-img read it through pagewise serve");

        ExternalTools.run(60, "cmp", source.toString(), served.toString()).assertOk("cmp source served");
        ExternalTools.run(60, "cmp", source.toString(), back.toString()).assertOk("cmp source back");
    }
}

package io.pagewise.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.pagewise.PageCache;
import io.pagewise.testing.ExternalTools;
import io.pagewise.testing.ResidencyCheck;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code pagewise serve} in each clean cache mode leaves at most 1 % of the served file in the page cache once it
 * stops, after a real client wrote all of it (nbdcopy) and after another read all of it (qemu-img).
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class ServeResidencyTest {
    private static final int SIZE = 128 << 20;

    @TempDir
    Path dir;

    /** Runs {@code pagewise serve --cache=MODE --run=CLIENT FILE} in this JVM until the client exits. */
    private static void serve(String mode, String client, String... more) {
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        String[] args = new String[3 + more.length];
        args[0] = "serve";
        args[1] = "--cache=" + mode;
        args[2] = "--run=" + client;
        System.arraycopy(more, 0, args, 3, more.length);
        int status = Main.run(args, System.out, new PrintStream(err, true, StandardCharsets.UTF_8));
        assertEquals(0, status, String.join(" ", args) + "\n" + err.toString(StandardCharsets.UTF_8));
    }

    @ParameterizedTest
    @ValueSource(strings = {"evict", "dontcache", "direct"})
    void aServedFileStaysOutOfThePageCache(String mode) throws Exception {
        ExternalTools.requireNativeLibrary();
        ExternalTools.require("nbdcopy", "qemu-img", "cmp", "vmtouch");
        Path source = dir.resolve("source.img");
        try (OutputStream out = Files.newOutputStream(source)) {
            Random random = new Random(17);
            byte[] chunk = new byte[1 << 20];
            for (int i = 0; i < SIZE / chunk.length; i++) {
                random.nextBytes(chunk);
                out.write(chunk);
            }
        }
        Path served = dir.resolve("served.img");

        serve(mode, "nbdcopy --flush '" + source + "' \"$uri\"", "--create=" + SIZE, served.toString());
        ResidencyCheck.assertAtMostOnePercent(served, mode + ", after nbdcopy wrote it through pagewise serve");

        PageCache.evict(served); // what EVICT finds cached at open it leaves cached: start cold
        Path back = dir.resolve("back.img");
        serve(mode, "qemu-img convert -f raw -O raw \"$uri\" '" + back + "'", served.toString());
        ResidencyCheck.assertAtMostOnePercent(served, mode + ", after qemu-img read it through pagewise serve");

        ExternalTools.run(60, "cmp", source.toString(), served.toString()).assertOk("cmp source served");
        ExternalTools.run(60, "cmp", source.toString(), back.toString()).assertOk("cmp source back");
    }
}

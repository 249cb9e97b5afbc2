package io.pagewise.cli;

import io.pagewise.CacheMode;
import io.pagewise.testing.ExternalTools;
import io.pagewise.testing.LazyFsExtension;
import io.pagewise.testing.LazyFsMount;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@code pagewise copy --flush SRC DST} into a new file on LazyFS: after a power cut the destination's bytes and size
 * are the source's, whatever the destination's cache mode (UNSAFE, whose flush does nothing, left out). The source
 * ends off a block boundary and has holes, so the copy zeroes, writes whole requests and ends with a short one.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class PowerLossCopyTest {
    @RegisterExtension
    static final LazyFsExtension LAZYFS = new LazyFsExtension();

    private static final int MiB = 1 << 20;

    @TempDir
    static Path dir;
    private static Path source;
    private static byte[] sourceBytes;

    @BeforeAll
    static void makeSource() throws Exception {
        source = dir.resolve("source.img");
        try (RandomAccessFile raf = new RandomAccessFile(source.toFile(), "rw")) {
            raf.setLength(4 * MiB + 1000);
            Random random = new Random(19);
            byte[] island = new byte[300_000];
            for (long at : new long[] {0, MiB + 4096, 3 * MiB + 1234}) {
                random.nextBytes(island);
                raf.seek(at);
                raf.write(island);
            }
            raf.seek(4 * MiB);
            raf.write(Arrays.copyOf(island, 1000));
        }
        sourceBytes = Files.readAllBytes(source);
    }

    @ParameterizedTest
    @MethodSource("io.pagewise.testing.LazyFsMount#durableModes")
    void aFlushedCopySurvives(CacheMode mode) throws Exception {
        LazyFsMount lazyfs = LAZYFS.mount();
        if (mode.needsNative()) ExternalTools.requireNativeLibrary();
        String name = "copy-" + mode.name().toLowerCase(Locale.ROOT);
        CommandRun.command("copy", "--flush", "--dst-cache=" + mode.name().toLowerCase(Locale.ROOT), source.toString(),
                lazyfs.file(name).toString()).assertOk();
        lazyfs.powerCut();
        lazyfs.assertSurvived(name, sourceBytes, 4096, "pagewise copy --flush --dst-cache=" + mode.name().toLowerCase(Locale.ROOT));
    }
}

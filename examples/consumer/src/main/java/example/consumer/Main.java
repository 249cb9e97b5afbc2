package example.consumer;

import io.pagewise.CacheMode;
import io.pagewise.Native;
import io.pagewise.PageCache;
import io.pagewise.Residency;
import io.pagewise.StorageFile;
import io.pagewise.backends.FileDevice;
import io.pagewise.backends.NbdDevice;
import io.pagewise.copy.Copier;
import io.pagewise.copy.CopyOptions;
import io.pagewise.copy.CopyResult;
import io.pagewise.nbd.client.NbdClient;
import io.pagewise.nbd.server.NbdServer;
import java.io.IOException;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.SplittableRandom;
import java.util.zip.CRC32;

/**
 * Uses pagewise from outside, as an application does: writes a disk image with EVICT, serves it with the embedded
 * NBD server, reads it back with NbdClient and copies it with Copier. Checks the data (CRC-32), that each file
 * is at most 1 % cached afterwards, and that the server's and the copier's log arrives in this application's own
 * {@link System.LoggerFinder} ({@link CollectedLog}); exits with status 1 and a message naming the failed check.
 *
 * <p>Usage: {@code java --enable-native-access=io.pagewise -p target/modules -m example.consumer [DIR]}, where DIR
 * (default: the temporary directory) must be on a disk-backed filesystem, not tmpfs.
 */
public final class Main {
    private static final long SIZE = 128L << 20;
    private static final int CHUNK = 1 << 20;
    /** A hole in the middle of the image: the copy must not write it as data. */
    private static final long HOLE_START = 48L << 20;
    private static final long HOLE_END = 64L << 20;
    private static final double MAX_CACHED_PERCENT = 1.0;

    private Main() {}

    /** A check that did not hold. */
    private static final class CheckFailed extends Exception {
        private static final long serialVersionUID = 1L;

        CheckFailed(String message) {
            super(message);
        }
    }

    public static void main(String[] args) {
        try {
            run(Path.of(args.length > 0 ? args[0] : System.getProperty("java.io.tmpdir")));
            System.out.println("consumer: OK");
        } catch (CheckFailed e) {
            System.err.println("consumer: FAILED: " + e.getMessage());
            System.exit(1);
        } catch (Exception e) {
            System.err.print("consumer: FAILED: ");
            e.printStackTrace();
            System.exit(1);
        }
    }

    private static void run(Path parent) throws Exception {
        Module library = StorageFile.class.getModule();
        check(library.isNamed(), "pagewise is not on the module path: it is in " + library);
        check(Native.isAvailable(), "the native library did not load: " + Native.loadError());
        // From JDK 22 the multi-release jar calls the C library through FFM, and loads no library.
        String binding = Runtime.version().feature() >= 22 ? "FFM" : "JNI";
        check(Native.binding().equals(binding), "Java " + Runtime.version() + " uses " + Native.binding() + ", not "
                + binding);
        System.out.println("using " + library + " on Java " + Runtime.version() + " through " + Native.binding());

        Path dir = Files.createTempDirectory(parent, "pagewise-consumer-");
        Path disk = dir.resolve("disk.img");
        Path copy = dir.resolve("copy.img");
        try {
            long expected = writeImage(disk);
            checkCached(disk, "after writing it with EVICT");

            try (FileDevice export = FileDevice.open(disk, CacheMode.EVICT, StandardOpenOption.READ);
                 NbdServer server = NbdServer.builder().export("disk", export)
                         .tcp(InetAddress.getLoopbackAddress(), 0).start()) {
                String uri = server.uri("disk");
                try (NbdClient client = NbdClient.connect(uri)) {
                    check(client.size() == SIZE, uri + " has " + client.size() + " bytes, not " + SIZE);
                    checkCrc(readOverNbd(client), expected, "NbdClient reading " + uri);
                }
                try (NbdDevice source = NbdDevice.connect(uri, 4);
                     FileDevice destination = FileDevice.create(copy, CacheMode.EVICT, SIZE)) {
                    CopyResult result = new Copier(new CopyOptions().flush(true)).copy(source, destination);
                    System.out.printf("copied %s to %s: %d bytes of data, %d of zeros skipped or zeroed%n", uri, copy,
                            result.dataBytes(), result.zeroedBytes() + result.skippedBytes());
                    check(result.dataBytes() == SIZE - (HOLE_END - HOLE_START),
                            "the copy wrote " + result.dataBytes() + " bytes of data; the hole is not data");
                }
            }
            // The export is closed here, which finishes its last evictions.
            checkCached(disk, "after serving it over NBD");
            checkCached(copy, "after copying to it");
            checkCrc(readFile(copy), expected, "the copy " + copy);
            checkCached(copy, "after reading it with EVICT");
            checkLog(library);
        } finally {
            Files.deleteIfExists(copy);
            Files.deleteIfExists(disk);
            Files.deleteIfExists(dir);
        }
    }

    /** Writes random data around a hole with EVICT; returns the CRC-32 of the whole image. */
    private static long writeImage(Path disk) throws IOException {
        SplittableRandom random = new SplittableRandom(42);
        CRC32 crc = new CRC32();
        byte[] chunk = new byte[CHUNK];
        try (StorageFile file = StorageFile.open(disk, CacheMode.EVICT, StandardOpenOption.READ,
                StandardOpenOption.WRITE, StandardOpenOption.CREATE_NEW)) {
            file.resize(SIZE);
            for (long at = 0; at < SIZE; at += CHUNK) {
                if (at >= HOLE_START && at < HOLE_END) {
                    crc.update(new byte[CHUNK]);
                    continue;
                }
                random.nextBytes(chunk);
                crc.update(chunk);
                file.write(ByteBuffer.wrap(chunk), at);
            }
            file.flush();
        }
        System.out.printf("wrote %s: %d MiB, CRC-32 %08x%n", disk, SIZE >> 20, crc.getValue());
        return crc.getValue();
    }

    /** Reads the export to its end as a FileChannel loop would: read moves the position and returns -1 at the end. */
    private static long readOverNbd(NbdClient client) throws IOException, CheckFailed {
        CRC32 crc = new CRC32();
        ByteBuffer buffer = ByteBuffer.allocateDirect(CHUNK);
        long at = 0;
        int n;
        while ((n = client.read(buffer.clear(), at)) != -1) {
            check(buffer.position() == n, "NbdClient.read returned " + n + " but moved the position to " + buffer.position());
            crc.update(buffer.flip());
            at += n;
        }
        check(at == SIZE, "NbdClient.read said the export ended at " + at + ", not " + SIZE);
        return crc.getValue();
    }

    private static long readFile(Path path) throws IOException, CheckFailed {
        CRC32 crc = new CRC32();
        ByteBuffer buffer = ByteBuffer.allocateDirect(CHUNK);
        try (StorageFile file = StorageFile.open(path, CacheMode.EVICT)) {
            for (long at = 0; at < SIZE; at += CHUNK) {
                int n = file.read(buffer.clear(), at);
                check(n == CHUNK, path + " ended at " + at + ", before " + SIZE + " bytes");
                crc.update(buffer.flip());
            }
        }
        return crc.getValue();
    }

    private static void checkCrc(long actual, long expected, String what) throws CheckFailed {
        check(actual == expected, String.format("%s gave CRC-32 %08x, not the image's %08x", what, actual, expected));
        System.out.printf("%s: CRC-32 matches%n", what);
    }

    private static void checkCached(Path path, String when) throws IOException, CheckFailed {
        Residency cached = PageCache.residency(path);
        System.out.printf("%s %s: %.2f %% cached (%d of %d pages)%n", path.getFileName(), when, cached.percent(),
                cached.residentPages(), cached.totalPages());
        check(cached.percent() <= MAX_CACHED_PERCENT, String.format("%s is %.2f %% cached %s; EVICT promises at most %.0f %%",
                path, cached.percent(), when, MAX_CACHED_PERCENT));
    }

    /**
     * The server logged each connection's export at DEBUG and the copier its result, both through loggers that
     * pagewise's module asked this application's LoggerFinder for; a clean run logs nothing at WARNING or above.
     */
    private static void checkLog(Module library) throws CheckFailed {
        List<CollectedLog.Entry> log = CollectedLog.entries();
        check(log.stream().anyMatch(e -> e.logger().equals(NbdServer.LOGGER_NAME) && e.level() == System.Logger.Level.DEBUG
                && e.message().contains(": serving 'disk'")), "the server's DEBUG lines did not arrive: " + log.size()
                + " messages kept");
        check(log.stream().anyMatch(e -> e.logger().equals(Copier.LOGGER_NAME) && e.level() == System.Logger.Level.DEBUG
                && e.message().startsWith("copied ")), "the copier's DEBUG lines did not arrive: " + log.size()
                + " messages kept");
        for (CollectedLog.Entry e : log) {
            check(e.caller() == library, e.logger() + " was asked for by " + e.caller() + ", not by " + library);
            check(e.level().getSeverity() < System.Logger.Level.WARNING.getSeverity(),
                    "a clean run logged " + e.level() + " " + e.logger() + ": " + e.message());
        }
        System.out.printf("log: %d messages from pagewise arrived in the application's LoggerFinder%n", log.size());
    }

    private static void check(boolean condition, String failure) throws CheckFailed {
        if (!condition) throw new CheckFailed(failure);
    }
}

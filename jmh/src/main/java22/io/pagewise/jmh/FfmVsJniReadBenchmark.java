package io.pagewise.jmh;

import io.pagewise.CacheMode;
import io.pagewise.PageCache;
import io.pagewise.StorageFile;
import io.pagewise.internal.JniReads;
import com.sun.nio.file.ExtendedOpenOption;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Whether FFM could replace JNI: one positional read through the library's JNI call against the same read bound with FFM (JDK 22+),
 * on one descriptor of one file, into the same direct buffer, walking a 256 MiB file in steps of {@code size}.
 * {@code direct=false}: the file is held in the page cache; {@code direct=true}: an O_DIRECT descriptor (the reads
 * go to the disk). {@code storageFile} is the public {@link StorageFile#read} path over the same file, and
 * {@code fileChannel} the JDK's own {@code FileChannel.read(ByteBuffer, long)} (also JNI, one pread per call), for scale.
 * Before measuring, every path is checked to read the same bytes and to answer the same -errno. The library's
 * classes are its JNI ones even on JDK 22+ (the fork turns the multi-release jar's versions off), unless the
 * command line gives the fork other JVM options.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
// The jar's own FFM classes (META-INF/versions/22) are turned off, so that jni and storageFile are the JNI path on
// any JDK; ffm-vs-jni-rounds.sh turns them back on for a method named with "@ffm".
@Fork(value = 3, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-Djdk.util.jar.enableMultiRelease=false"})
@State(Scope.Benchmark)
public class FfmVsJniReadBenchmark {
    private static final long FILE_SIZE = 256L << 20;
    private static final int ALIGNMENT = 4096;

    @Param({"4096", "1048576"})
    public int size;

    @Param({"false"})
    public boolean direct;

    private Path path;
    private int fd;
    private StorageFile storage;
    private FileChannel channel;

    @State(Scope.Thread)
    public static class Cursor {
        ByteBuffer buffer;
        long offset;

        @Setup(Level.Trial)
        public void allocate(FfmVsJniReadBenchmark benchmark) {
            buffer = aligned(benchmark.size);
        }

        long next(int size) {
            long at = offset;
            offset = (offset + size) % FILE_SIZE;
            return at;
        }
    }

    @Setup(Level.Trial)
    public void open() throws IOException {
        path = Files.createTempFile(Path.of(System.getProperty("pagewise.bench.dir", "/var/tmp")), "pagewise-ffm", ".raw");
        fd = -1;
        try {
            fill(path);
            if (direct) PageCache.evict(path);
            else PageCache.touch(path);
            fd = JniReads.open(path, direct);
            storage = StorageFile.open(path, direct ? CacheMode.DIRECT : CacheMode.WRITEBACK, StandardOpenOption.READ);
            channel = direct ? FileChannel.open(path, StandardOpenOption.READ, ExtendedOpenOption.DIRECT)
                    : FileChannel.open(path, StandardOpenOption.READ);
            checkPathsAgree();
        } catch (IOException | RuntimeException e) {
            close(); // JMH runs no teardown after a failed setup: the 256 MiB file would stay behind
            throw e;
        }
    }

    @TearDown(Level.Trial)
    public void close() throws IOException {
        if (storage != null) storage.close();
        if (channel != null) channel.close();
        if (fd >= 0) JniReads.close(fd);
        PageCache.evict(path);
        Files.deleteIfExists(path);
    }

    @Benchmark
    public int jni(Cursor cursor) {
        return full(JniReads.read(fd, cursor.buffer.clear(), cursor.next(size)));
    }

    @Benchmark
    public int ffmPread(Cursor cursor) {
        return full(FfmPositionalReads.pread(fd, cursor.buffer.clear(), cursor.next(size)));
    }

    @Benchmark
    public int ffmPreadv(Cursor cursor) {
        return full(FfmPositionalReads.preadv(fd, cursor.buffer.clear(), cursor.next(size)));
    }

    @Benchmark
    public int storageFile(Cursor cursor) throws IOException {
        return full(storage.read(cursor.buffer.clear(), cursor.next(size)));
    }

    @Benchmark
    public int fileChannel(Cursor cursor) throws IOException {
        ByteBuffer buffer = cursor.buffer.clear();
        long at = cursor.next(size);
        int n = 0;
        while (buffer.hasRemaining()) {
            int got = channel.read(buffer, at + n);
            if (got < 0) break;
            n += got;
        }
        return full(n);
    }

    private int full(int n) {
        if (n != size) throw new IllegalStateException("read " + n + " of " + size + " bytes");
        return n;
    }

    /** Each 8-byte word holds its own offset, so a read from the wrong place shows. */
    private static void fill(Path path) throws IOException {
        try (FileChannel out = FileChannel.open(path, StandardOpenOption.WRITE)) {
            ByteBuffer chunk = ByteBuffer.allocateDirect(1 << 20).order(ByteOrder.LITTLE_ENDIAN);
            for (long at = 0; at < FILE_SIZE; at += chunk.capacity()) {
                chunk.clear();
                for (int i = 0; i < chunk.capacity(); i += 8) chunk.putLong(i, at + i);
                while (chunk.hasRemaining()) out.write(chunk, at + chunk.position());
            }
        }
    }

    private interface Read {
        int read(int fd, ByteBuffer dst, long offset);
    }

    /** The JNI and both FFM bindings read the same bytes, stop at end of file and answer the same -errno. */
    private void checkPathsAgree() {
        Read[] reads = {JniReads::read, FfmPositionalReads::pread, FfmPositionalReads::preadv};
        String[] names = {"jni", "ffm pread", "ffm preadv"};
        for (int r = 0; r < reads.length; r++) {
            for (long at : new long[] {0, 3L * size, FILE_SIZE - size}) {
                ByteBuffer buffer = aligned(size);
                int n = reads[r].read(fd, buffer, at);
                expect(names[r] + " at " + at, size, n);
                expect(names[r] + " position", size, buffer.position());
                for (int i = 0; i < size; i += 8) {
                    long word = buffer.order(ByteOrder.LITTLE_ENDIAN).getLong(i);
                    if (word != at + i) throw new IllegalStateException(names[r] + ": word " + (at + i) + " read as " + word);
                }
            }
            // A descriptor that is not open: the call fails with EBADF, as the JNI layer reports it.
            expect(names[r] + " on a closed descriptor", -JniReads.EBADF, reads[r].read(-1, aligned(size), 0));
            if (direct) {
                expect(names[r] + " O_DIRECT at an unaligned offset", -JniReads.EINVAL,
                        reads[r].read(fd, aligned(size), 512 + 1));
            } else {
                ByteBuffer tail = aligned(size);
                expect(names[r] + " across end of file", 100, reads[r].read(fd, tail, FILE_SIZE - 100));
                // byte 4 of the tail is file offset FILE_SIZE - 96, where a word starts
                expect(names[r] + " tail word", FILE_SIZE - 96, tail.order(ByteOrder.LITTLE_ENDIAN).getLong(4));
            }
        }
    }

    private static void expect(String what, long wanted, long got) {
        if (wanted != got) throw new IllegalStateException(what + ": expected " + wanted + ", got " + got);
    }

    private static ByteBuffer aligned(int size) {
        return ByteBuffer.allocateDirect(size + ALIGNMENT).alignedSlice(ALIGNMENT).slice(0, size);
    }
}

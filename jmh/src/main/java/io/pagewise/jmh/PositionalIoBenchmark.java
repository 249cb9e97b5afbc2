package io.pagewise.jmh;

import com.sun.nio.file.ExtendedOpenOption;
import io.pagewise.CacheMode;
import io.pagewise.PageCache;
import io.pagewise.StorageFile;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.AuxCounters;
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
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.ThreadParams;

/**
 * Target J1: pagewise's positional read/write (JNI on JDK 17-21, FFM on 22+) against
 * {@code FileChannel.read/write(ByteBuffer, long)} ({@code via}), walking a 256 MiB file in steps of {@code size}, into direct or
 * heap buffers ({@code buffer}), from one thread ({@code read}, {@code write}) or four ({@code read4}, {@code write4},
 * each thread with its own buffer and cursor, starting a quarter of the file apart). {@code mode} is the
 * StorageFile's cache mode. What the FileChannel does in each mode, so which comparisons are like for like:
 * <ul>
 *   <li>WRITEBACK, UNSAFE: both buffered, on a file held in the page cache: the same system calls.</li>
 *   <li>DIRECT: the FileChannel is opened with {@code ExtendedOpenOption.DIRECT} (O_DIRECT), and direct buffers are
 *       4 KiB aligned on both sides: both go to the disk, the same system calls.</li>
 *   <li>EVICT, DONTCACHE: the FileChannel has no such mode; it stays buffered on a cached file, the bar a user
 *       compares against. pagewise reads and writes go to the disk there (the modes keep the file out of the cache), so these
 *       compare a cache-clean mode against cached I/O, not like for like.</li>
 * </ul>
 * Bytes per second are in the {@code bytes} counter.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
@State(Scope.Benchmark)
public class PositionalIoBenchmark {
    private static final long FILE_SIZE = 256L << 20;

    @Param({"4096", "65536", "1048576"})
    public int size;

    /**
     * pagewise or FileChannel. Named so that it sorts after the other parameters: JMH varies the last one fastest, so
     * each case runs through both APIs back to back, and load from other processes falls on both alike.
     */
    @Param({"pagewise", "filechannel"})
    public String via;

    @Param({"direct", "heap"})
    public String buffer;

    @Param({"WRITEBACK", "UNSAFE", "EVICT", "DONTCACHE", "DIRECT"})
    public String mode;

    private Path path;
    private StorageFile storage;
    private FileChannel channel;
    private boolean pagewise;

    /** Bytes moved, reported per second. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.OPERATIONS)
    public static class Bytes {
        public long bytes;

        @Setup(Level.Iteration)
        public void reset() {
            bytes = 0;
        }
    }

    @State(Scope.Thread)
    public static class Cursor {
        ByteBuffer buffer;
        long offset;

        @Setup(Level.Trial)
        public void allocate(PositionalIoBenchmark benchmark, ThreadParams thread) {
            int size = benchmark.size;
            if (benchmark.buffer.equals("heap")) {
                buffer = ByteBuffer.allocate(size);
            } else {
                // 4 KiB aligned, as O_DIRECT needs (FileChannel refuses anything else; pagewise would bounce it).
                buffer = ByteBuffer.allocateDirect(size + 4096).alignedSlice(4096).slice(0, size);
            }
            // Threads start a share of the file apart, at a multiple of the request size.
            offset = FILE_SIZE / thread.getThreadCount() * thread.getThreadIndex() / size * size;
        }

        long next(int size) {
            long at = offset;
            offset = (offset + size) % FILE_SIZE;
            return at;
        }
    }

    @Setup(Level.Trial)
    public void open() throws IOException {
        path = Files.createTempFile(Path.of(System.getProperty("pagewise.bench.dir", "/var/tmp")), "pagewise-j1", ".raw");
        try (FileChannel fill = FileChannel.open(path, StandardOpenOption.WRITE)) {
            ByteBuffer chunk = ByteBuffer.allocateDirect(1 << 20);
            for (long at = 0; at < FILE_SIZE; at += chunk.capacity()) fill.write(chunk.clear(), at);
            // On disk before anything is measured: O_DIRECT writes over dirty cached pages would write them back
            // first, and extents not yet allocated (delayed allocation) make every write an allocating one.
            fill.force(true);
        }
        PageCache.touch(path);
        CacheMode cacheMode = CacheMode.valueOf(mode);
        pagewise = via.equals("pagewise");
        storage = StorageFile.open(path, cacheMode, StandardOpenOption.READ, StandardOpenOption.WRITE);
        channel = cacheMode.isDirect()
                ? FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE, ExtendedOpenOption.DIRECT)
                : FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE);
    }

    @TearDown(Level.Trial)
    public void close() throws IOException {
        storage.close();
        channel.close();
        PageCache.evict(path);
        Files.deleteIfExists(path);
    }

    @Benchmark
    public int read(Cursor cursor, Bytes bytes) throws IOException {
        ByteBuffer buffer = cursor.buffer.clear();
        long at = cursor.next(size);
        int n;
        if (pagewise) {
            n = storage.read(buffer, at);
        } else {
            n = 0;
            while (buffer.hasRemaining()) n += channel.read(buffer, at + n);
        }
        bytes.bytes += n;
        return n;
    }

    @Benchmark
    public void write(Cursor cursor, Bytes bytes) throws IOException {
        ByteBuffer buffer = cursor.buffer.clear();
        long at = cursor.next(size);
        if (pagewise) {
            storage.write(buffer, at);
        } else {
            long done = 0;
            while (buffer.hasRemaining()) done += channel.write(buffer, at + done);
        }
        bytes.bytes += size;
    }

    /** {@link #read} from four threads at once, on the one file. */
    @Benchmark
    @Threads(4)
    public int read4(Cursor cursor, Bytes bytes) throws IOException {
        return read(cursor, bytes);
    }

    /** {@link #write} from four threads at once, on the one file. */
    @Benchmark
    @Threads(4)
    public void write4(Cursor cursor, Bytes bytes) throws IOException {
        write(cursor, bytes);
    }
}

package io.pagewise.jmh;

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
import org.openjdk.jmh.annotations.Warmup;

/**
 * J1: pagewise's positional read/write (JNI on JDK 17-21, FFM on 22+) against
 * {@code FileChannel.read/write(ByteBuffer, long)} on cached data, walking a 256 MiB file, into direct or heap
 * buffers ({@code buffer}); {@code mode} is the StorageFile's cache mode (the FileChannel is buffered in any case).
 * Bytes per second are in the {@code bytes} counter. {@code -t 4} runs four threads, each with its own buffer and
 * cursor, on the one file.
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

    @Param({"pagewise", "filechannel"})
    public String api;

    @Param({"direct", "heap"})
    public String buffer;

    @Param({"WRITEBACK"})
    public String mode;

    private Path path;
    private StorageFile storage;
    private FileChannel channel;

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
        public void allocate(PositionalIoBenchmark benchmark) {
            buffer = benchmark.buffer.equals("heap") ? ByteBuffer.allocate(benchmark.size)
                    : ByteBuffer.allocateDirect(benchmark.size);
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
        }
        PageCache.touch(path);
        storage = StorageFile.open(path, CacheMode.valueOf(mode), StandardOpenOption.READ, StandardOpenOption.WRITE);
        channel = FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE);
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
        if (api.equals("pagewise")) {
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
        if (api.equals("pagewise")) {
            storage.write(buffer, at);
        } else {
            long done = 0;
            while (buffer.hasRemaining()) done += channel.write(buffer, at + done);
        }
        bytes.bytes += size;
    }
}

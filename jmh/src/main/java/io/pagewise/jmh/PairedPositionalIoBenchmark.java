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
 * StorageFile against FileChannel at 4 KiB, measured in pairs: {@link PositionalIoBenchmark}'s cases with both APIs in one JVM at the same
 * moments. Each call of a benchmark method makes one request through {@code StorageFile} and one through
 * {@code FileChannel}, in an order that alternates from call to call, and times each with {@code System.nanoTime}; the
 * counters {@code pagewiseNanos} and {@code fileChannelNanos} sum each API's time over the iteration. Load from other
 * processes, the kernel's writeback and the disk fall on both alike, where PositionalIoBenchmark runs each API in a
 * fork of its own, minutes apart. The speed ratio pagewise / FileChannel of an iteration is
 * {@code fileChannelNanos / pagewiseNanos} (jmh/summarize.sh prints it).
 *
 * <p>Each API has a 256 MiB file of its own (EVICT would otherwise drop pages that the FileChannel then reads from
 * the disk), both written, synced and read into the page cache before the trial, and each thread walks both files in
 * lockstep, with a buffer per API. What the FileChannel does in each mode is as in PositionalIoBenchmark: buffered,
 * except with O_DIRECT for DIRECT.
 *
 * <p>The two files are not alike: on ext4 (Linux 6.18) 4 KiB writes to the file made first were 7-9 % slower than
 * to the other, FileChannel against FileChannel. So every case runs with each API on either file ({@code swapFiles})
 * and jmh/summarize.sh combines the two (the geometric mean of their ratios, in which a file's own speed cancels).
 * With {@code -Dpagewise.bench.fileChannelOnBoth=true} the pagewise side is a second FileChannel: what the benchmark
 * itself measures when both sides are the same.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
@State(Scope.Benchmark)
public class PairedPositionalIoBenchmark {
    private static final long FILE_SIZE = 256L << 20;

    @Param({"4096"})
    public int size;

    @Param({"direct", "heap"})
    public String buffer;

    @Param({"WRITEBACK", "UNSAFE", "EVICT", "DONTCACHE", "DIRECT"})
    public String mode;

    /** false: pagewise gets the file made first; true: FileChannel does. */
    @Param({"false", "true"})
    public boolean swapFiles;

    /** The pagewise side as a FileChannel too: the benchmark's own bias, with nothing to tell the sides apart. */
    private static final boolean FILE_CHANNEL_ON_BOTH = Boolean.getBoolean("pagewise.bench.fileChannelOnBoth");

    private Path storagePath;
    private Path channelPath;
    private StorageFile storage;
    private FileChannel storageSide; // FILE_CHANNEL_ON_BOTH only
    private FileChannel channel;

    /** Nanoseconds spent in each API's calls, summed over the iteration (and over the threads). */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.EVENTS)
    public static class Nanos {
        public long pagewiseNanos;
        public long fileChannelNanos;

        @Setup(Level.Iteration)
        public void reset() {
            pagewiseNanos = 0;
            fileChannelNanos = 0;
        }
    }

    @State(Scope.Thread)
    public static class Cursor {
        ByteBuffer forStorage;
        ByteBuffer forChannel;
        long offset;
        boolean storageFirst;

        @Setup(Level.Trial)
        public void allocate(PairedPositionalIoBenchmark benchmark, ThreadParams thread) {
            forStorage = allocate(benchmark.size, benchmark.buffer);
            forChannel = allocate(benchmark.size, benchmark.buffer);
            // Threads start a share of the file apart, at a multiple of the request size.
            offset = FILE_SIZE / thread.getThreadCount() * thread.getThreadIndex() / benchmark.size * benchmark.size;
        }

        private static ByteBuffer allocate(int size, String kind) {
            if (kind.equals("heap")) return ByteBuffer.allocate(size);
            // 4 KiB aligned, as O_DIRECT needs (FileChannel refuses anything else; pagewise would bounce it).
            return ByteBuffer.allocateDirect(size + 4096).alignedSlice(4096).slice(0, size);
        }

        long next(int size) {
            long at = offset;
            offset = (offset + size) % FILE_SIZE;
            storageFirst = !storageFirst;
            return at;
        }
    }

    @Setup(Level.Trial)
    public void open() throws IOException {
        Path dir = Path.of(System.getProperty("pagewise.bench.dir", "/var/tmp"));
        Path first = filled(dir);
        Path second = filled(dir);
        storagePath = swapFiles ? second : first;
        channelPath = swapFiles ? first : second;
        CacheMode cacheMode = CacheMode.valueOf(mode);
        storage = StorageFile.open(storagePath, cacheMode, StandardOpenOption.READ, StandardOpenOption.WRITE);
        channel = channel(channelPath, cacheMode);
        if (FILE_CHANNEL_ON_BOTH) storageSide = channel(storagePath, cacheMode);
    }

    private static FileChannel channel(Path path, CacheMode cacheMode) throws IOException {
        return cacheMode.isDirect()
                ? FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE, ExtendedOpenOption.DIRECT)
                : FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE);
    }

    /** A file of FILE_SIZE on disk (synced, its extents allocated) and in the page cache. */
    private static Path filled(Path dir) throws IOException {
        Path path = Files.createTempFile(dir, "pagewise-paired", ".raw");
        try (FileChannel fill = FileChannel.open(path, StandardOpenOption.WRITE)) {
            ByteBuffer chunk = ByteBuffer.allocateDirect(1 << 20);
            for (long at = 0; at < FILE_SIZE; at += chunk.capacity()) fill.write(chunk.clear(), at);
            fill.force(true);
        }
        PageCache.touch(path);
        return path;
    }

    @TearDown(Level.Trial)
    public void close() throws IOException {
        storage.close();
        channel.close();
        if (storageSide != null) storageSide.close();
        for (Path path : new Path[] {storagePath, channelPath}) {
            PageCache.evict(path);
            Files.deleteIfExists(path);
        }
    }

    @Benchmark
    public int read(Cursor cursor, Nanos nanos) throws IOException {
        long at = cursor.next(size);
        int n;
        if (cursor.storageFirst) {
            long t0 = System.nanoTime();
            n = readStorage(cursor.forStorage.clear(), at);
            long t1 = System.nanoTime();
            n += readChannel(cursor.forChannel.clear(), at);
            nanos.pagewiseNanos += t1 - t0;
            nanos.fileChannelNanos += System.nanoTime() - t1;
        } else {
            long t0 = System.nanoTime();
            n = readChannel(cursor.forChannel.clear(), at);
            long t1 = System.nanoTime();
            n += readStorage(cursor.forStorage.clear(), at);
            nanos.fileChannelNanos += t1 - t0;
            nanos.pagewiseNanos += System.nanoTime() - t1;
        }
        return n;
    }

    private int readStorage(ByteBuffer buffer, long at) throws IOException {
        return storageSide == null ? storage.read(buffer, at) : read(storageSide, buffer, at);
    }

    private int readChannel(ByteBuffer buffer, long at) throws IOException {
        return read(channel, buffer, at);
    }

    private static int read(FileChannel channel, ByteBuffer buffer, long at) throws IOException {
        int n = 0;
        while (buffer.hasRemaining()) n += channel.read(buffer, at + n);
        return n;
    }

    @Benchmark
    public void write(Cursor cursor, Nanos nanos) throws IOException {
        long at = cursor.next(size);
        if (cursor.storageFirst) {
            long t0 = System.nanoTime();
            writeStorage(cursor.forStorage.clear(), at);
            long t1 = System.nanoTime();
            writeChannel(cursor.forChannel.clear(), at);
            nanos.pagewiseNanos += t1 - t0;
            nanos.fileChannelNanos += System.nanoTime() - t1;
        } else {
            long t0 = System.nanoTime();
            writeChannel(cursor.forChannel.clear(), at);
            long t1 = System.nanoTime();
            writeStorage(cursor.forStorage.clear(), at);
            nanos.fileChannelNanos += t1 - t0;
            nanos.pagewiseNanos += System.nanoTime() - t1;
        }
    }

    private void writeStorage(ByteBuffer buffer, long at) throws IOException {
        if (storageSide == null) {
            storage.write(buffer, at);
        } else {
            write(storageSide, buffer, at);
        }
    }

    private void writeChannel(ByteBuffer buffer, long at) throws IOException {
        write(channel, buffer, at);
    }

    private static void write(FileChannel channel, ByteBuffer buffer, long at) throws IOException {
        long done = 0;
        while (buffer.hasRemaining()) done += channel.write(buffer, at + done);
    }

    /** {@link #read} from four threads at once, each on both files. */
    @Benchmark
    @Threads(4)
    public int read4(Cursor cursor, Nanos nanos) throws IOException {
        return read(cursor, nanos);
    }

    /** {@link #write} from four threads at once, each on both files. */
    @Benchmark
    @Threads(4)
    public void write4(Cursor cursor, Nanos nanos) throws IOException {
        write(cursor, nanos);
    }
}

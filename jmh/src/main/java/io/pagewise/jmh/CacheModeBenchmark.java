package io.pagewise.jmh;

import io.pagewise.CacheMode;
import io.pagewise.PageCache;
import io.pagewise.StorageFile;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Locale;
import java.util.Random;
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
 * Sequential read and write of a whole file on cold data, one pass (one invocation) per iteration, for each
 * CacheMode; writes end with flush. The file is evicted (reads) or recreated (writes) before every iteration.
 * JMH reports the time per pass; SingleShotTime has no aux counters, so after each iteration a line
 * {@code residency: MODE OP MiB/s resident%} is printed and, with {@code -Dpagewise.bench.csv=FILE}
 * (passed through {@code -jvmArgsAppend}), appended to FILE as {@code mode,op,sizeMiB,seconds,MiBps,residentPercent}.
 */
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 1)
@Measurement(iterations = 3)
@Fork(1)
@State(Scope.Benchmark)
public class CacheModeBenchmark {
    private static final int CHUNK = 1 << 20;

    @Param({"WRITEBACK", "WRITETHROUGH", "UNSAFE", "DIRECT", "DIRECTSYNC", "EVICT", "DONTCACHE"})
    public CacheMode mode;

    @Param({"read", "write"})
    public String op;

    @Param({"1024"})
    public int sizeMiB;

    Path path;
    private ByteBuffer buffer;

    private long passStart;
    private long passEnd;

    @Setup(Level.Trial)
    public void create() throws IOException {
        Path dir = Path.of(System.getProperty("pagewise.bench.dir", "/var/tmp"));
        path = dir.resolve("pagewise-modes-" + ProcessHandle.current().pid() + ".raw");
        buffer = ByteBuffer.allocateDirect(CHUNK);
        byte[] noise = new byte[CHUNK];
        new Random(1).nextBytes(noise);
        buffer.put(noise).clear();
        if (op.equals("read")) writeFile(CacheMode.DONTCACHE);
    }

    @Setup(Level.Iteration)
    public void resetCache() throws IOException {
        if (op.equals("read")) {
            PageCache.evict(path);
        } else {
            Files.deleteIfExists(path);
        }
    }

    @TearDown(Level.Iteration)
    public void reportResidency() throws IOException {
        double seconds = (passEnd - passStart) / 1e9;
        double resident = PageCache.residency(path).percent();
        double mibps = sizeMiB / seconds;
        System.out.printf(Locale.ROOT, "%nresidency: %s %s %.0f MiB/s %.2f %%%n", mode, op, mibps, resident);
        String csv = System.getProperty("pagewise.bench.csv");
        if (csv != null) {
            String line = String.format(Locale.ROOT, "%s,%s,%d,%.3f,%.0f,%.2f%n", mode, op, sizeMiB, seconds, mibps, resident);
            Files.writeString(Path.of(csv), line, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        }
    }

    @TearDown(Level.Trial)
    public void remove() throws IOException {
        Files.deleteIfExists(path);
    }

    @Benchmark
    public long pass() throws IOException {
        passStart = System.nanoTime();
        long moved = 0;
        if (op.equals("read")) {
            try (StorageFile file = StorageFile.open(path, mode)) {
                long size = (long) sizeMiB << 20;
                for (long at = 0; at < size; at += CHUNK) moved += file.read(buffer.clear(), at);
            }
        } else {
            writeFile(mode);
            moved = (long) sizeMiB << 20;
        }
        passEnd = System.nanoTime();
        return moved;
    }

    private void writeFile(CacheMode writeMode) throws IOException {
        try (StorageFile file = StorageFile.open(path, writeMode, StandardOpenOption.READ, StandardOpenOption.WRITE,
                StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING)) {
            long size = (long) sizeMiB << 20;
            for (long at = 0; at < size; at += CHUNK) file.write(buffer.clear(), at);
            file.flush();
        }
    }
}

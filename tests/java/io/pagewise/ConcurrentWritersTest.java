package io.pagewise;

import static io.pagewise.Fixtures.assertBytes;
import static java.nio.file.StandardOpenOption.CREATE_NEW;
import static java.nio.file.StandardOpenOption.READ;
import static java.nio.file.StandardOpenOption.WRITE;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.pagewise.Fixtures.BufferKind;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Several threads write (or zero) disjoint ranges of one file at once, in every mode. The ranges start and end at
 * unaligned offsets, so neighbours share the blocks at their edges (DIRECT has to read-modify-write those), and the
 * first round grows an empty file from many threads at once. Every byte and the final size are checked.
 */
@Timeout(90)
class ConcurrentWritersTest {
    private static final int THREADS = 8;
    private static final int TOTAL = (2 << 20) + 1234;

    @TempDir
    Path dir;

    @ParameterizedTest
    @EnumSource(CacheMode.class)
    void disjointWritersSharingEdgeBlocksKeepEveryByte(CacheMode mode) throws Exception {
        Path path = dir.resolve("shared");
        try (StorageFile file = StorageFile.open(path, mode, CREATE_NEW, READ, WRITE)) {
            // Round 1 grows the empty file from every thread; round 2 overwrites it with other piece boundaries.
            for (int round = 0; round < 2; round++) {
                byte[] expected = Fixtures.random(mode.ordinal() * 100L + round, TOTAL);
                Fixtures.writeConcurrently(file, expected, THREADS, true, partition(new Random(round * 7L + mode.ordinal())));
                assertEquals(TOTAL, file.size(), mode + " round " + round + ": size");
                assertBytes(expected, Fixtures.read(file, 0, TOTAL + 100, BufferKind.DIRECT), mode + " round " + round);
                assertBytes(expected, Files.readAllBytes(path), mode + " round " + round + " via Files.readAllBytes");
            }
        }
    }

    /**
     * Writes and zero/trim calls on disjoint ranges that share blocks, from several threads: under O_DIRECT a
     * read-modify-write that read a block before a neighbouring range was zeroed must not write the old bytes back
     * over the zeros.
     */
    @ParameterizedTest
    @EnumSource(CacheMode.class)
    void zeroTrimAndWritesSharingBlocksDoNotUndoEachOther(CacheMode mode) throws Exception {
        Path path = dir.resolve("zero-vs-write");
        int total = mode == CacheMode.DIRECTSYNC ? 64 * 1024 : 256 * 1024; // DIRECTSYNC syncs every write
        int threads = 4;
        for (int round = 0; round < 3; round++) {
            Files.write(path, Fixtures.random(round + 100, total)); // old bytes everywhere, none of them all zero
            byte[] expected = Fixtures.random(round + 200, total);
            List<List<int[]>> owned = new ArrayList<>();
            for (int t = 0; t < threads; t++) owned.add(new ArrayList<>());
            Random random = new Random(round);
            int piece = 0;
            for (int at = 0; at < total; piece++) {
                int length = Math.min(1 + random.nextInt(3000), total - at);
                boolean zeroed = piece % 2 == 1;
                if (zeroed) Arrays.fill(expected, at, at + length, (byte) 0);
                owned.get(piece % threads).add(new int[] {at, length, zeroed ? 1 + random.nextInt(3) : 0});
                at += length;
            }
            try (StorageFile file = StorageFile.open(path, mode, READ, WRITE)) {
                ExecutorService pool = Executors.newFixedThreadPool(threads);
                try {
                    CyclicBarrier start = new CyclicBarrier(threads);
                    List<Future<?>> done = new ArrayList<>();
                    for (List<int[]> mine : owned) {
                        Collections.shuffle(mine, random);
                        done.add(pool.submit(() -> {
                            start.await();
                            for (int[] p : mine) {
                                switch (p[2]) {
                                    case 0: Fixtures.write(file, p[0], Arrays.copyOfRange(expected, p[0], p[0] + p[1]),
                                            BufferKind.HEAP); break;
                                    case 1: file.zero(p[0], p[1], true); break;
                                    case 2: file.zero(p[0], p[1], false); break;
                                    default: file.zero(p[0], p[1], true); file.trim(p[0], p[1]); break;
                                }
                            }
                            return null;
                        }));
                    }
                    for (Future<?> f : done) f.get();
                } finally {
                    pool.shutdownNow();
                }
                assertEquals(total, file.size());
                assertBytes(expected, Fixtures.read(file, 0, total, BufferKind.DIRECT), mode + " round " + round);
            }
        }
    }

    /** Splits [0, TOTAL) into pieces of mostly a few KiB (many shared blocks) and some longer than a bounce buffer. */
    private static List<int[]> partition(Random random) {
        List<int[]> pieces = new ArrayList<>();
        for (int at = 0; at < TOTAL; ) {
            int roll = random.nextInt(100);
            int length = roll < 60 ? 1 + random.nextInt(9000) : roll < 95 ? 1 + random.nextInt(60_000)
                    : (1 << 20) + random.nextInt(5000);
            length = Math.min(length, TOTAL - at);
            pieces.add(new int[] {at, length});
            at += length;
        }
        return pieces;
    }
    /**
     * A small unaligned write beside a whole-block write to the same block, from two threads: DIRECT reads that block,
     * changes it and writes it back, which must not undo the whole-block write (byte 0 is written by it alone, so
     * whichever order the two take, it ends as the whole-block write left it).
     */
    @ParameterizedTest
    @EnumSource(value = CacheMode.class, names = {"DIRECT", "WRITEBACK"})
    void aReadModifyWriteDoesNotUndoAWholeBlockWriteToTheSameBlock(CacheMode mode) throws Exception {
        Path path = dir.resolve("overlap-" + mode + ".raw");
        Files.write(path, new byte[8192]);
        try (StorageFile file = StorageFile.open(path, mode, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            assertNoWholeBlockWriteUndone(file, file);
        }
    }

    /**
     * As above, with the two writers on two opens of the file (a library user's two, or the two devices serve --dir
     * opens on a file resized in between): they share the file's gate.
     */
    @ParameterizedTest
    @EnumSource(value = CacheMode.class, names = {"DIRECT", "DIRECTSYNC"})
    void aReadModifyWriteThroughAnotherOpenDoesNotUndoAWholeBlockWrite(CacheMode mode) throws Exception {
        Path path = dir.resolve("two-opens-" + mode + ".raw");
        Files.write(path, new byte[8192]);
        try (StorageFile whole = StorageFile.open(path, mode, StandardOpenOption.READ, StandardOpenOption.WRITE);
             StorageFile small = StorageFile.open(dir.resolve(".").resolve(path.getFileName()), mode,
                     StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            assertNoWholeBlockWriteUndone(whole, small);
        }
    }

    /** Whole-block writes of block 0 through one file, one-byte writes at 100 through the other, at the same time. */
    private static void assertNoWholeBlockWriteUndone(StorageFile file, StorageFile smallFile) throws Exception {
        java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
        java.util.concurrent.atomic.AtomicLong small = new java.util.concurrent.atomic.AtomicLong();
        Thread smallWriter = new Thread(() -> {
            ByteBuffer one = ByteBuffer.allocate(1);
            try {
                while (!stop.get()) {
                    smallFile.write(one.clear().put(0, (byte) 7), 100);
                    small.incrementAndGet();
                }
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
        smallWriter.start();
        ByteBuffer whole = ByteBuffer.allocateDirect(4096 + 4096).alignedSlice(4096).slice(0, 4096);
        ByteBuffer back = ByteBuffer.allocate(1);
        int lost = 0;
        int trials = 300;
        try {
            for (int trial = 1; trial <= trials; trial++) {
                byte mark = (byte) (trial % 100 + 1);
                for (int i = 0; i < 4096; i++) whole.put(i, mark);
                file.write(whole.clear(), 0);
                long seen = small.get();
                while (small.get() < seen + 2) Thread.onSpinWait(); // two of its writes ran after this one
                file.read(back.clear(), 0);
                if (back.get(0) != mark) lost++;
            }
        } finally {
            stop.set(true);
            smallWriter.join(10_000);
        }
        assertEquals(0, lost, "whole-block writes undone at byte 0, of " + trials);
    }
}

package io.pagewise.policy;

import static io.pagewise.testing.TestData.random;
import static io.pagewise.testing.TestData.sparseFile;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.CacheMode;
import io.pagewise.internal.FileDescriptors;
import io.pagewise.internal.IoCounters;
import io.pagewise.internal.IoVector;
import io.pagewise.internal.NativeRawFile;
import io.pagewise.internal.RawFile;
import io.pagewise.internal.Space;
import io.pagewise.testing.ExternalTools;
import io.pagewise.testing.ResidencyCheck;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * DIRECT writes reach the kernel through Linux AIO, each submitted and waited for: on ext4 a synchronous O_DIRECT
 * write into a hole holds the exclusive inode lock until the disk is done, so writes into a sparse file (the NBD
 * benchmark's target) ran one at a time. Checked by what the file counts at its system calls, not by timing; and
 * the writes keep DIRECT's guarantees: the bytes, FUA as RWF_DSYNC, holes where nothing was written, no page cache.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class DirectAioWritesTest {
    private static final int MIB = 1 << 20;

    @TempDir
    Path dir;

    @ParameterizedTest
    @EnumSource(value = CacheMode.class, names = {"DIRECT", "DIRECTSYNC"})
    void writesIntoHolesGoByIoSubmitAndKeepTheGuarantees(CacheMode mode) throws IOException {
        afterAWriteIntoAHole(mode, "writes by io_submit", (file, policy, counters, whole) -> {
            assertEquals(0, counters.dsyncWrites());

            byte[] fua = random(2, 256 * 1024);
            policy.write(IoVector.of(new ByteBuffer[] {aligned(fua)}, 8L * MIB), true);
            assertEquals(2, counters.aioWrites(), "a FUA write goes by io_submit too");
            assertEquals(1, counters.dsyncWrites(), "with RWF_DSYNC");

            byte[] odd = random(3, 10);
            policy.write(IoVector.of(new ByteBuffer[] {ByteBuffer.wrap(odd)}, 20L * MIB + 5), false);
            assertEquals(3, counters.aioWrites(), "the bounced block of an unaligned write goes by io_submit");
            assertEquals(0, counters.syncs(), "no whole-file sync anywhere");

            assertArrayEquals(whole, read(policy, 4L * MIB, whole.length));
            assertArrayEquals(fua, read(policy, 8L * MIB, fua.length));
            byte[] block = read(policy, 20L * MIB, 4096);
            assertArrayEquals(odd, Arrays.copyOfRange(block, 5, 15));
            assertArrayEquals(new byte[5], Arrays.copyOfRange(block, 0, 5), "the rest of the block reads as zeros");

            assertEquals(4L * MIB, file.seek(0, Space.SEEK_DATA), "nothing allocated before the first write");
            assertEquals(5L * MIB, file.seek(4L * MIB, Space.SEEK_HOLE), "nothing allocated past the write");
            assertEquals(64L * MIB, file.size(), "writes inside the file keep its size");
        });
    }

    /**
     * A write over allocated data goes by pwritev: ext4 runs that one under the shared inode lock, and a submitted
     * one's completion passes through a kernel worker (4 KiB overwrites ran at half the rate). A write
     * that reaches into a hole still goes by io_submit.
     */
    @ParameterizedTest
    @EnumSource(value = CacheMode.class, names = {"DIRECT", "DIRECTSYNC"})
    void overwritesOfAllocatedDataGoByPwritev(CacheMode mode) throws IOException {
        afterAWriteIntoAHole(mode, "overwrites by pwritev", (file, policy, counters, whole) -> {
            byte[] page = random(4, 4096);
            policy.write(IoVector.of(aligned(page), 4L * MIB + 8192), false);
            byte[] fua = random(5, 4096);
            policy.write(IoVector.of(aligned(fua), 4L * MIB + 16384), true);
            byte[] odd = random(6, 10);
            policy.write(IoVector.of(ByteBuffer.wrap(odd), 4L * MIB + 5), false);
            assertEquals(1, counters.aioWrites(), "overwrites, aligned, FUA and bounced, go by pwritev");
            assertEquals(1, counters.dsyncWrites(), "the FUA one with RWF_DSYNC");

            byte[] straddling = random(7, 8192);
            policy.write(IoVector.of(aligned(straddling), 5L * MIB - 4096), false);
            assertEquals(2, counters.aioWrites(), "a write reaching into a hole goes by io_submit");

            System.arraycopy(page, 0, whole, 8192, page.length);
            System.arraycopy(fua, 0, whole, 16384, fua.length);
            System.arraycopy(odd, 0, whole, 5, odd.length);
            System.arraycopy(straddling, 0, whole, MIB - 4096, 4096);
            assertArrayEquals(whole, read(policy, 4L * MIB, whole.length));
            assertArrayEquals(Arrays.copyOfRange(straddling, 4096, 8192), read(policy, 5L * MIB, 4096));
            assertEquals(64L * MIB, file.size(), "writes inside the file keep its size");

            // A range known to be allocated is forgotten when a hole is punched into it.
            policy.write(IoVector.of(aligned(page), 4L * MIB + 8192), false);
            assertEquals(2, counters.aioWrites(), "an overwrite again");
            assertTrue(policy.fallocate(Space.PUNCH_HOLE, 4L * MIB, 64 * 1024), "punch");
            policy.write(IoVector.of(aligned(page), 4L * MIB + 8192), false);
            assertEquals(3, counters.aioWrites(), "into the punched hole: by io_submit");
        });
    }

    /** The rest of a test, once 1 MiB of random data (seed 1) is in the file at 4 MiB. */
    private interface AfterTheFirstWrite {
        void run(RawFile file, CachePolicy policy, IoCounters counters, byte[] whole) throws IOException;
    }

    /**
     * Opens a 64 MiB sparse file in mode, writes 1 MiB into its hole at 4 MiB (one io_submit), runs the rest of the
     * test, and checks after close that the file is at most 1 % cached.
     */
    private void afterAWriteIntoAHole(CacheMode mode, String writes, AfterTheFirstWrite rest) throws IOException {
        ExternalTools.requireNativeLibrary();
        Path path = sparseFile(dir.resolve("sparse"), 64L * MIB);
        try (RawFile file = open(path, mode)) {
            CachePolicy policy = CachePolicy.create(mode, file);
            IoCounters counters = file.counters();
            byte[] whole = random(1, MIB);
            policy.write(IoVector.of(new ByteBuffer[] {aligned(whole)}, 4L * MIB), false);
            assertEquals(1, counters.aioWrites(), "an aligned 1 MiB write into a hole is one io_submit");
            rest.run(file, policy, counters, whole);
        }
        ResidencyCheck.assertAtMostOnePercent(path, mode + " " + writes);
    }

    /**
     * Writers in flight at once each borrow their own AIO context from the library's pool (256 of them): every
     * write of 16 threads writing at once goes by io_submit, none falls back to a synchronous write for want of a
     * context, and each lands where it was asked. Each thread writes its own length and refills one buffer for its
     * next write as soon as a write returns: a thread that took another's completion from a shared context would
     * return early, with a wrong count, and overwrite a buffer the kernel was still writing from.
     */
    @ParameterizedTest
    @EnumSource(value = CacheMode.class, names = {"DIRECT"})
    void concurrentWritersEachBorrowAContextOfTheirOwn(CacheMode mode) throws Exception {
        ExternalTools.requireNativeLibrary();
        int threads = 16;
        int writesEach = 24;
        int slot = 256 * 1024;
        Path path = sparseFile(dir.resolve("concurrent"), (long) threads * writesEach * slot);
        try (RawFile file = open(path, mode)) {
            CachePolicy policy = CachePolicy.create(mode, file);
            CyclicBarrier start = new CyclicBarrier(threads);
            ExecutorService pool = Executors.newFixedThreadPool(threads);
            try {
                List<Future<?>> done = new ArrayList<>();
                for (int t = 0; t < threads; t++) {
                    int thread = t;
                    done.add(pool.submit(() -> {
                        ByteBuffer buffer = ByteBuffer.allocateDirect(slot + 4096).alignedSlice(4096);
                        start.await();
                        for (int i = 0; i < writesEach; i++) {
                            int index = i * threads + thread; /* interleaved: neighbours write at once */
                            buffer.clear().put(random(100 + index, length(thread, slot))).flip();
                            policy.write(IoVector.of(new ByteBuffer[] {buffer}, (long) index * slot), false);
                        }
                        return null;
                    }));
                }
                for (Future<?> future : done) future.get(30, TimeUnit.SECONDS);
            } finally {
                pool.shutdownNow();
            }
            assertEquals((long) threads * writesEach, file.counters().aioWrites(),
                    "every write went by io_submit, none synchronously for want of a context");
            for (int index = 0; index < threads * writesEach; index++) {
                int length = length(index % threads, slot);
                assertArrayEquals(random(100 + index, length), read(policy, (long) index * slot, length),
                        "block " + index);
            }
        }
    }

    /** Thread t's write length: a quarter, half, three quarters or all of a slot. */
    private static int length(int thread, int slot) {
        return slot / 4 * (1 + thread % 4);
    }

    /**
     * Where the file system's completion of a submitted write is not known to sync it (tmpfs here stands in for
     * FUSE, where LazyFS lost every such FUA write at a power cut), writes go by pwritev2: none by io_submit, FUA
     * still as RWF_DSYNC.
     */
    @ParameterizedTest
    @EnumSource(value = CacheMode.class, names = {"DIRECT", "DIRECTSYNC"})
    void writesAreSynchronousWhereASubmittedWriteMayCompleteUnsynced(CacheMode mode) throws IOException {
        ExternalTools.requireNativeLibrary();
        Path path = java.nio.file.Files.createTempFile(ExternalTools.tmpfs(), "pagewise-aio", ".img");
        try (RawFile file = open(path, mode)) {
            CachePolicy policy = CachePolicy.create(mode, file);
            assertEquals(false, ((NativeRawFile) file).takesAio(), "tmpfs is not a file system known to sync at completion");
            policy.write(IoVector.of(new ByteBuffer[] {aligned(random(4, MIB))}, 0), false);
            policy.write(IoVector.of(new ByteBuffer[] {aligned(random(5, 64 * 1024))}, MIB), true);
            policy.write(IoVector.of(new ByteBuffer[] {ByteBuffer.wrap(random(6, 10))}, 5), true);
            assertEquals(0, file.counters().aioWrites(), "no write by io_submit");
            assertEquals(2, file.counters().dsyncWrites(), "both FUA writes with RWF_DSYNC");
        } finally {
            java.nio.file.Files.deleteIfExists(path);
        }
    }

    @org.junit.jupiter.api.Test
    void onlyFileSystemsWhoseCompletionSyncsTakeSubmittedWrites() {
        assertEquals(true, NativeRawFile.asyncWritesDurable(0xEF53L), "ext4");
        assertEquals(true, NativeRawFile.asyncWritesDurable(0x58465342L), "XFS");
        assertEquals(true, NativeRawFile.asyncWritesDurable(0x9123683EL), "btrfs");
        assertEquals(false, NativeRawFile.asyncWritesDurable(0x65735546L), "FUSE");
        assertEquals(false, NativeRawFile.asyncWritesDurable(0x01021994L), "tmpfs");
        assertEquals(false, NativeRawFile.asyncWritesDurable(0x6969L), "NFS");
    }

    private RawFile open(Path path, CacheMode mode) throws IOException {
        try {
            return NativeRawFile.open(path, FileDescriptors.READ_WRITE | CachePolicy.openFlags(mode));
        } catch (IOException e) {
            ExternalTools.unavailable("O_DIRECT cannot be opened in " + dir + ": " + e.getMessage(),
                    "CI's temporary directory is on a file system with O_DIRECT");
            throw e;
        }
    }

    private static ByteBuffer aligned(byte[] bytes) {
        return ByteBuffer.allocateDirect(bytes.length + 4096).alignedSlice(4096).put(bytes).flip();
    }

    private static byte[] read(CachePolicy policy, long offset, int length) throws IOException {
        ByteBuffer got = ByteBuffer.allocate(length);
        assertEquals(length, policy.read(IoVector.of(new ByteBuffer[] {got}, offset)));
        return got.array();
    }

}

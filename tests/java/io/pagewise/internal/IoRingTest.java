package io.pagewise.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.system.NativeIOException;
import io.pagewise.testing.ExternalTools;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The io_uring ring's binding, whichever this run has: JNI ({@code native/io_ring.c}) on JDK 17, FFM in the ffm
 * suite. Both must give the same results: completions carry their tags and the kernel's result (-errno for a request
 * that failed), and what submit refuses is refused whole, leaving the ring usable.
 */
@Timeout(60)
class IoRingTest {
    private static final int EBADF = 9; // Linux, every architecture
    private static final int EBUSY = 16;
    private static final int EOPNOTSUPP = 95;

    @TempDir
    Path dir;
    private long ring;

    @BeforeEach
    void openRing() {
        ExternalTools.requireNativeLibrary();
        ring = IoRingBinding.open(8);
        if (ring == -Errno.ENOSYS || ring == -Errno.EPERM) {
            ExternalTools.unavailable("io_uring refused here (" + Errno.name((int) -ring) + ")",
                    "the ring must be tested");
        }
        assertTrue(ring > 0, "open: " + ring);
    }

    @AfterEach
    void closeRing() {
        if (ring > 0) assertEquals(0, IoRingBinding.close(ring));
    }

    /** A batch of requests in the arrays submit takes. */
    private static final class Batch {
        final int[] ops;
        final int[] fds;
        final ByteBuffer[] buffers;
        final int[] positions;
        final int[] lengths;
        final long[] offsets;
        final int[] flags;
        final long[] tags;
        int count;

        Batch(int capacity) {
            ops = new int[capacity];
            fds = new int[capacity];
            buffers = new ByteBuffer[capacity];
            positions = new int[capacity];
            lengths = new int[capacity];
            offsets = new long[capacity];
            flags = new int[capacity];
            tags = new long[capacity];
        }

        Batch add(int op, int fd, ByteBuffer buffer, int position, int length, long offset, int flag, long tag) {
            ops[count] = op;
            fds[count] = fd;
            buffers[count] = buffer;
            positions[count] = position;
            lengths[count] = length;
            offsets[count] = offset;
            flags[count] = flag;
            tags[count] = tag;
            count++;
            return this;
        }

        Batch nop(long tag) {
            return add(IoRing.NOP, -1, null, 0, 0, 0, 0, tag);
        }

        int submit(long ring) {
            return submitCount(ring, count);
        }

        /** Submits as if the batch held n requests, to see submit refuse a count its arrays do not hold. */
        int submitCount(long ring, int n) {
            return IoRingBinding.submit(ring, n, ops, fds, buffers, positions, lengths, offsets, flags, tags);
        }
    }

    /** Reaps until count completions are in: result by tag (each tag once). */
    private static Map<Long, Integer> reap(long ring, int count) {
        Map<Long, Integer> results = new HashMap<>();
        long[] tags = new long[4];
        int[] got = new int[4];
        while (results.size() < count) {
            int n = IoRingBinding.reap(ring, 1, tags, got);
            assertTrue(n >= 1, "reap: " + n);
            for (int i = 0; i < n; i++) {
                Integer before = results.put(tags[i], got[i]);
                assertEquals(null, before, "tag " + tags[i] + " completed twice");
            }
        }
        assertEquals(0, IoRingBinding.reap(ring, 0, tags, got), "no completion beyond those submitted");
        return results;
    }

    private static byte[] random(int length, long seed) {
        byte[] data = new byte[length];
        new Random(seed).nextBytes(data);
        return data;
    }

    private interface WithDescriptor {
        void run(int fd) throws Exception;
    }

    private static void withOpenFile(Path path, byte[] content, int flags, WithDescriptor body) throws Exception {
        Files.write(path, content);
        int fd = FileDescriptors.open(path, flags);
        assertTrue(fd >= 0, "open: " + fd);
        try {
            body.run(fd);
        } finally {
            FileDescriptors.close(fd);
        }
    }

    @Test
    void batchesOfReadsReturnTheFilesBytesWithTheirTags() throws Exception {
        byte[] data = random(1 << 20, 1);
        withOpenFile(dir.resolve("data"), data, 0, fd -> {
            int piece = 4096;
            // Positions count from the buffer's index 0, whatever its own position: one buffer, eight ranges of it,
            // its position left elsewhere. 32 batches go round the ring's 8 entries many times.
            ByteBuffer buffer = ByteBuffer.allocateDirect(8 * piece + 100);
            buffer.position(77);
            Random random = new Random(2);
            for (int round = 0; round < 32; round++) {
                Batch batch = new Batch(8);
                long[] offsets = new long[8];
                for (int i = 0; i < 8; i++) {
                    offsets[i] = random.nextInt(data.length - piece);
                    batch.add(IoRing.READ, fd, buffer, 100 + i * piece, piece, offsets[i], 0, round * 100L + i);
                }
                assertEquals(8, batch.submit(ring));
                Map<Long, Integer> results = reap(ring, 8);
                for (int i = 0; i < 8; i++) {
                    assertEquals(piece, results.get(round * 100L + i), "read " + i + " of round " + round);
                    byte[] got = new byte[piece];
                    buffer.get(100 + i * piece, got);
                    int from = (int) offsets[i];
                    assertArrayEquals(Arrays.copyOfRange(data, from, from + piece), got, "read " + i);
                }
            }
            assertEquals(77, buffer.position(), "the buffer's position is not the ring's to move");
        });
    }

    @Test
    void writesThenReadsBackTheirBytes() throws Exception {
        Path path = dir.resolve("written");
        withOpenFile(path, new byte[0], FileDescriptors.READ_WRITE, fd -> {
            byte[][] pieces = new byte[4][];
            Batch writes = new Batch(4);
            for (int i = 0; i < 4; i++) {
                pieces[i] = random(3000 + i, 10 + i);
                ByteBuffer src = ByteBuffer.allocateDirect(pieces[i].length).put(pieces[i]);
                writes.add(IoRing.WRITE, fd, src, 0, pieces[i].length, 5000L * i, 0, -1 - i);
            }
            assertEquals(4, writes.submit(ring));
            Map<Long, Integer> written = reap(ring, 4);
            for (int i = 0; i < 4; i++) assertEquals(pieces[i].length, written.get(-1L - i), "write " + i);
            byte[] file = Files.readAllBytes(path);
            for (int i = 0; i < 4; i++) {
                assertArrayEquals(pieces[i], Arrays.copyOfRange(file, 5000 * i, 5000 * i + pieces[i].length));
            }

            Batch reads = new Batch(4);
            ByteBuffer[] dsts = new ByteBuffer[4];
            for (int i = 0; i < 4; i++) {
                dsts[i] = ByteBuffer.allocateDirect(4000);
                reads.add(IoRing.READ, fd, dsts[i], 0, 4000, 5000L * i, 0, Long.MAX_VALUE - i);
            }
            assertEquals(4, reads.submit(ring));
            Map<Long, Integer> read = reap(ring, 4);
            assertEquals(4000, read.get(Long.MAX_VALUE), "a whole 4000 bytes between two pieces");
            assertEquals(pieces[3].length, read.get(Long.MAX_VALUE - 3), "the last piece ends the file: a short read");
            for (int i = 0; i < 4; i++) {
                byte[] got = new byte[pieces[i].length];
                dsts[i].get(0, got);
                assertArrayEquals(pieces[i], got, "read back " + i);
            }
        });
    }

    @Test
    void aNopCompletesWithResultZero() {
        assertEquals(1, new Batch(1).nop(42).submit(ring));
        assertEquals(Map.of(42L, 0), reap(ring, 1));
    }

    @Test
    void aBadDescriptorFailsInItsResultNotInSubmit() throws Exception {
        withOpenFile(dir.resolve("good"), random(100, 3), 0, fd -> {
            ByteBuffer a = ByteBuffer.allocateDirect(100);
            ByteBuffer b = ByteBuffer.allocateDirect(100);
            Batch batch = new Batch(3).add(IoRing.READ, -1, a, 0, 100, 0, 0, 1)
                    .add(IoRing.READ, fd, b, 0, 100, 0, 0, 2)
                    .add(IoRing.WRITE, fd, b, 0, 100, 0, 0, 3); // a read-only descriptor
            assertEquals(3, batch.submit(ring));
            assertEquals(Map.of(1L, -EBADF, 2L, 100, 3L, -EBADF), reap(ring, 3));
        });
    }

    @Test
    void aDsyncWriteIsWritten() throws Exception {
        Path path = dir.resolve("dsync");
        withOpenFile(path, new byte[0], FileDescriptors.READ_WRITE, fd -> {
            byte[] data = random(8192, 4);
            ByteBuffer src = ByteBuffer.allocateDirect(data.length).put(0, data);
            assertEquals(1, new Batch(1).add(IoRing.WRITE, fd, src, 0, data.length, 0, PositionalIo.DSYNC, 7)
                    .submit(ring));
            assertEquals(Map.of(7L, data.length), reap(ring, 1));
            assertArrayEquals(data, Files.readAllBytes(path));
        });
    }

    @Test
    void dontcacheReachesTheKernelAsRwfDontcache() throws Exception {
        // tmpfs refuses RWF_DONTCACHE (EOPNOTSUPP): a request that came back written never asked for it.
        Path path = Files.createTempFile(ExternalTools.tmpfs(), "pagewise-ring", ".bin");
        try {
            withOpenFile(path, new byte[0], FileDescriptors.READ_WRITE, fd -> {
                ByteBuffer src = ByteBuffer.allocateDirect(4096);
                assertEquals(1, new Batch(1).add(IoRing.WRITE, fd, src, 0, 4096, 0, PositionalIo.DONTCACHE, 8)
                        .submit(ring));
                assertEquals(Map.of(8L, -EOPNOTSUPP), reap(ring, 1));
            });
        } finally {
            Files.deleteIfExists(path);
        }
    }

    @Test
    void aBufferRangeOutOfBoundsIsRefusedWithNothingSubmitted() throws Exception {
        withOpenFile(dir.resolve("bounds"), random(8192, 5), 0, fd -> {
            ByteBuffer ok = ByteBuffer.allocateDirect(100);
            Object[][] refused = {
                {"past capacity", ok, 50, 51}, {"negative position", ok, -1, 10},
                {"heap buffer", ByteBuffer.allocate(100), 0, 100}, {"heap buffer past its start", ByteBuffer.allocate(100), 10, 50},
                {"null buffer", null, 0, 100},
            };
            for (Object[] bad : refused) {
                // The first request is valid: it must not go either.
                Batch batch = new Batch(2).add(IoRing.READ, fd, ok, 0, 100, 0, 0, 1)
                        .add(IoRing.READ, fd, (ByteBuffer) bad[1], (int) bad[2], (int) bad[3], 0, 0, 2);
                assertEquals(-Errno.EFAULT, batch.submit(ring), (String) bad[0]);
                assertEquals(0, IoRingBinding.reap(ring, 0, new long[4], new int[4]), "nothing submitted: " + bad[0]);
            }
            Batch invalid = new Batch(1).add(IoRing.READ, fd, ok, 0, -1, 0, 0, 1);
            assertEquals(-Errno.EINVAL, invalid.submit(ring), "negative length");
            invalid = new Batch(1).add(IoRing.READ, fd, ok, 0, 100, -1, 0, 1);
            assertEquals(-Errno.EINVAL, invalid.submit(ring), "negative offset");
            invalid = new Batch(1).add(3, fd, ok, 0, 100, 0, 0, 1);
            assertEquals(-Errno.EINVAL, invalid.submit(ring), "unknown operation");
            invalid = new Batch(1).add(IoRing.READ, fd, ok, 0, 100, 0, PositionalIo.SHORT_IS_EOF, 1);
            assertEquals(-Errno.EINVAL, invalid.submit(ring), "a flag the ring does not take");
            assertEquals(-Errno.EINVAL, new Batch(2).nop(1).nop(2).submitCount(ring, 3), "count beyond the arrays");
            assertEquals(0, IoRingBinding.reap(ring, 0, new long[4], new int[4]), "still nothing submitted");

            // The ring still works, and only this batch's tags come back; an empty range needs no buffer.
            Batch batch = new Batch(2).add(IoRing.READ, fd, ok, 0, 100, 100, 0, 3)
                    .add(IoRing.READ, fd, null, 0, 0, 0, 0, 4);
            assertEquals(2, batch.submit(ring));
            assertEquals(Map.of(3L, 100, 4L, 0), reap(ring, 2));
        });
    }

    @Test
    void reapWithMinZeroReturnsZeroWhenNothingIsPending() {
        long[] tags = {-5};
        int[] results = {-5};
        assertEquals(0, IoRingBinding.reap(ring, 0, tags, results));
        assertEquals(-5, tags[0], "nothing written");
        assertEquals(-Errno.EINVAL, IoRingBinding.reap(ring, -1, tags, results), "negative min");
        assertEquals(-Errno.EINVAL, IoRingBinding.reap(ring, 0, new long[0], new int[0]), "no room");
        assertEquals(-Errno.EINVAL, IoRingBinding.reap(ring, 0, new long[2], new int[1]), "results shorter than tags");
    }

    @Test
    void reapTakesAsManyAsTheArraysHoldAndLeavesTheRest() {
        Batch batch = new Batch(3).nop(1).nop(2).nop(3);
        assertEquals(3, batch.submit(ring));
        long[] tags = new long[2];
        int[] results = new int[2];
        assertEquals(2, IoRingBinding.reap(ring, 3, tags, results), "waits for 3, takes the 2 the arrays hold");
        assertEquals(1, IoRingBinding.reap(ring, 0, tags, results));
        assertEquals(0, IoRingBinding.reap(ring, 0, tags, results));
    }

    @Test
    void reapWaitsForTheCompletionsItAsksFor() throws Exception {
        CompletableFuture<Long> reaped = CompletableFuture.supplyAsync(() -> {
            long[] tags = new long[4];
            int[] results = new int[4];
            int n = IoRingBinding.reap(ring, 1, tags, results);
            return n == 1 ? tags[0] : -n;
        });
        Thread.sleep(200);
        boolean returnedEarly = reaped.isDone();
        assertEquals(1, new Batch(1).nop(99).submit(ring)); // before any assertion: the reaper must not stay blocked
        assertEquals(99L, reaped.get(20, TimeUnit.SECONDS));
        assertTrue(!returnedEarly, "reap with min 1 returned with nothing submitted");
    }

    @Test
    void aRingOfNEntriesRefusesMoreThanNQueued() {
        long small = IoRingBinding.open(4);
        assertTrue(small > 0, "open: " + small);
        try {
            Batch five = new Batch(5).nop(1).nop(2).nop(3).nop(4).nop(5);
            assertEquals(-EBUSY, five.submit(small));
            assertEquals(0, IoRingBinding.reap(small, 0, new long[8], new int[8]), "nothing submitted");
            Batch four = new Batch(4).nop(1).nop(2).nop(3).nop(4);
            assertEquals(4, four.submit(small));
            assertEquals(Map.of(1L, 0, 2L, 0, 3L, 0, 4L, 0), reap(small, 4));
        } finally {
            assertEquals(0, IoRingBinding.close(small));
        }
    }

    @Test
    void openRefusesZeroEntriesAndTooMany() {
        assertEquals(-Errno.EINVAL, IoRingBinding.open(0));
        assertEquals(-Errno.EINVAL, IoRingBinding.open(-1));
        assertEquals(-Errno.EINVAL, IoRingBinding.open(4097));
        NativeIOException e = assertThrows(NativeIOException.class, () -> IoRing.open(0));
        assertEquals(Errno.EINVAL, e.errno());
    }

    @Test
    void noRingIsEinval() {
        Batch batch = new Batch(1).nop(1);
        assertEquals(-Errno.EINVAL, batch.submit(0));
        assertEquals(-Errno.EINVAL, IoRingBinding.reap(0, 0, new long[1], new int[1]));
        assertEquals(-Errno.EINVAL, IoRingBinding.close(0));
        assertEquals(-Errno.EINVAL, batch.submitCount(ring, 0), "count 0");
    }

    @Test
    @Tag("ffm")
    void aClosedOrUnknownHandleIsEinvalInTheFfmRegistry() {
        long closed = IoRingBinding.open(2);
        assertTrue(closed > 0, "open: " + closed);
        assertEquals(0, IoRingBinding.close(closed));
        for (long handle : new long[] {closed, Long.MAX_VALUE, -1}) {
            assertEquals(-Errno.EINVAL, new Batch(1).nop(1).submit(handle), "submit " + handle);
            assertEquals(-Errno.EINVAL, IoRingBinding.reap(handle, 0, new long[1], new int[1]), "reap " + handle);
            assertEquals(-Errno.EINVAL, IoRingBinding.close(handle), "close " + handle);
        }
    }

    /**
     * The FFM binding spells out the kernel's numbers and struct layouts that io_ring.c takes from its headers: each
     * architecture's C compiler checks them (gcc for x86_64, aarch64-linux-gnu-gcc for aarch64), as FfmConstantsTest
     * does for the other FFM classes.
     */
    @Test
    @Tag("ffm")
    void theFfmBindingUsesTheHeadersNumbers() throws Exception {
        assertEquals("FFM", io.pagewise.Native.binding(), "these constants are the FFM binding's");
        Map<String, String> constants = new java.util.LinkedHashMap<>();
        for (String name : new String[] {"EINVAL", "EFAULT", "EBUSY", "IORING_OP_NOP", "IORING_OP_READ",
                "IORING_OP_WRITE", "IORING_FEAT_SINGLE_MMAP", "IORING_FEAT_RW_CUR_POS", "IORING_ENTER_GETEVENTS",
                "IORING_OFF_SQ_RING", "IORING_OFF_CQ_RING", "IORING_OFF_SQES", "RWF_DSYNC", "PROT_READ", "PROT_WRITE",
                "MAP_SHARED", "MAP_POPULATE"}) {
            constants.put(name, name);
        }
        constants.put("PARAMS_SIZE", "sizeof(struct io_uring_params)");
        constants.put("PARAMS_SQ_ENTRIES", "offsetof(struct io_uring_params, sq_entries)");
        constants.put("PARAMS_CQ_ENTRIES", "offsetof(struct io_uring_params, cq_entries)");
        constants.put("PARAMS_FEATURES", "offsetof(struct io_uring_params, features)");
        constants.put("PARAMS_SQ_OFF", "offsetof(struct io_uring_params, sq_off)");
        constants.put("PARAMS_CQ_OFF", "offsetof(struct io_uring_params, cq_off)");
        constants.put("SQ_OFF_HEAD", "offsetof(struct io_sqring_offsets, head)");
        constants.put("SQ_OFF_TAIL", "offsetof(struct io_sqring_offsets, tail)");
        constants.put("SQ_OFF_RING_MASK", "offsetof(struct io_sqring_offsets, ring_mask)");
        constants.put("SQ_OFF_ARRAY", "offsetof(struct io_sqring_offsets, array)");
        constants.put("CQ_OFF_HEAD", "offsetof(struct io_cqring_offsets, head)");
        constants.put("CQ_OFF_TAIL", "offsetof(struct io_cqring_offsets, tail)");
        constants.put("CQ_OFF_RING_MASK", "offsetof(struct io_cqring_offsets, ring_mask)");
        constants.put("CQ_OFF_CQES", "offsetof(struct io_cqring_offsets, cqes)");
        constants.put("SQE_SIZE", "sizeof(struct io_uring_sqe)");
        constants.put("SQE_OPCODE", "offsetof(struct io_uring_sqe, opcode)");
        constants.put("SQE_FD", "offsetof(struct io_uring_sqe, fd)");
        constants.put("SQE_OFF", "offsetof(struct io_uring_sqe, off)");
        constants.put("SQE_ADDR", "offsetof(struct io_uring_sqe, addr)");
        constants.put("SQE_LEN", "offsetof(struct io_uring_sqe, len)");
        constants.put("SQE_RW_FLAGS", "offsetof(struct io_uring_sqe, rw_flags)");
        constants.put("SQE_USER_DATA", "offsetof(struct io_uring_sqe, user_data)");
        constants.put("CQE_SIZE", "sizeof(struct io_uring_cqe)");
        constants.put("CQE_RES", "offsetof(struct io_uring_cqe, res)");
        Class<?> arch = Class.forName("io.pagewise.internal.Ffm$Arch");
        for (String compiler : new String[] {"gcc", "aarch64-linux-gnu-gcc"}) {
            ExternalTools.require(compiler);
            Object archConstant = Enum.valueOf(arch.asSubclass(Enum.class),
                    compiler.startsWith("aarch64") ? "AARCH64" : "X86_64");
            StringBuilder source = new StringBuilder("#define _GNU_SOURCE\n");
            for (String header : new String[] {"errno.h", "stddef.h", "sys/mman.h", "sys/syscall.h", "sys/uio.h",
                    "linux/io_uring.h"}) {
                source.append("#include <").append(header).append(">\n");
            }
            for (Map.Entry<String, String> entry : constants.entrySet()) {
                source.append(check(entry.getValue(), entry.getKey(), value(IoRingBinding.class, null, entry.getKey())));
            }
            source.append(check("SYS_io_uring_setup", "ioUringSetup", value(arch, archConstant, "ioUringSetup")));
            source.append(check("SYS_io_uring_enter", "ioUringEnter", value(arch, archConstant, "ioUringEnter")));
            Path file = dir.resolve("io-ring-constants.c");
            Files.writeString(file, source);
            ExternalTools.run(60, compiler, "-std=gnu11", "-fsyntax-only", file.toString())
                    .assertOk(compiler + " checking the FFM ring's numbers");
        }
    }

    private static String check(String expression, String field, long value) {
        return String.format("_Static_assert((long long) (%s) == %dLL, \"%s is %d\");%n", expression, value, field,
                value);
    }

    private static long value(Class<?> owner, Object instance, String name) throws Exception {
        java.lang.reflect.Field field = owner.getDeclaredField(name);
        field.setAccessible(true);
        return ((Number) field.get(instance)).longValue();
    }

    @Test
    void theIoRingClassThrowsWhatTheBindingRefuses() throws Exception {
        try (IoRing io = IoRing.open(4)) {
            assertEquals(4, io.entries());
            ByteBuffer heap = ByteBuffer.allocate(10);
            NativeIOException e = assertThrows(NativeIOException.class, () -> io.submit(1, new int[] {IoRing.READ},
                    new int[] {0}, new ByteBuffer[] {heap}, new int[1], new int[] {10}, new long[1], new int[1],
                    new long[] {1}));
            assertEquals(Errno.EFAULT, e.errno());
            io.submit(1, new int[] {IoRing.NOP}, new int[] {-1}, new ByteBuffer[1], new int[1], new int[1],
                    new long[1], new int[1], new long[] {5});
            long[] tags = new long[2];
            int[] results = {-1, -1};
            assertEquals(1, io.reap(1, tags, results));
            assertEquals(5, tags[0]);
            assertEquals(0, results[0]);
        }
    }
}

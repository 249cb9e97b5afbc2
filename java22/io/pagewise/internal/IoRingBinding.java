package io.pagewise.internal;

import static io.pagewise.internal.PositionalIo.DONTCACHE;
import static io.pagewise.internal.PositionalIo.DSYNC;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.lang.ref.Reference;
import java.nio.ByteBuffer;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@link IoRing}'s calls by FFM (JDK 22+), the twin of the JNI binding with its methods and results: what
 * {@code native/io_ring.c} does for the JNI binding is done here, by the same system calls. A ring's handle is its
 * number in this class's registry (never reused, so a closed handle stays unknown: -EINVAL). One thread submits at a
 * time and one reaps (IoRing keeps it so); the shared head and tail words are read with acquire and written with
 * release, as the kernel's side of the ring expects.
 */
final class IoRingBinding {
    private static final int EINVAL = 22;
    private static final int EFAULT = 14;
    private static final int EBUSY = 16;

    private static final int IORING_OP_NOP = 0;
    private static final int IORING_OP_READ = 22; // Linux 5.6
    private static final int IORING_OP_WRITE = 23;
    private static final int IORING_FEAT_SINGLE_MMAP = 1;
    private static final int IORING_FEAT_RW_CUR_POS = 1 << 3; // Linux 5.6, with IORING_OP_READ and WRITE
    private static final int IORING_ENTER_GETEVENTS = 1;
    private static final long IORING_OFF_SQ_RING = 0;
    private static final long IORING_OFF_CQ_RING = 0x8000000L;
    private static final long IORING_OFF_SQES = 0x10000000L;
    private static final int RWF_DSYNC = 0x2;
    private static final int RWF_DONTCACHE = 0x80; // Linux 6.14
    private static final int PROT_READ = 1;
    private static final int PROT_WRITE = 2;
    private static final int MAP_SHARED = 1;
    private static final int MAP_POPULATE = 0x8000;
    private static final int MAX_ENTRIES = 4096;

    /** struct io_uring_params: its size and the offsets of the fields read here. */
    private static final int PARAMS_SIZE = 120;
    private static final long PARAMS_SQ_ENTRIES = 0;
    private static final long PARAMS_CQ_ENTRIES = 4;
    private static final long PARAMS_FEATURES = 20;
    private static final long PARAMS_SQ_OFF = 40; // struct io_sqring_offsets
    private static final long PARAMS_CQ_OFF = 80; // struct io_cqring_offsets
    /** Fields of struct io_sqring_offsets and struct io_cqring_offsets: where each is in the mapped rings. */
    private static final long SQ_OFF_HEAD = 0;
    private static final long SQ_OFF_TAIL = 4;
    private static final long SQ_OFF_RING_MASK = 8;
    private static final long SQ_OFF_ARRAY = 24;
    private static final long CQ_OFF_HEAD = 0;
    private static final long CQ_OFF_TAIL = 4;
    private static final long CQ_OFF_RING_MASK = 8;
    private static final long CQ_OFF_CQES = 20;
    /** struct io_uring_sqe (64 bytes) and struct io_uring_cqe (16 bytes), as this class writes and reads them. */
    private static final long SQE_SIZE = 64;
    private static final long SQE_OPCODE = 0;
    private static final long SQE_FD = 4;
    private static final long SQE_OFF = 8;
    private static final long SQE_ADDR = 16;
    private static final long SQE_LEN = 24;
    private static final long SQE_RW_FLAGS = 28;
    private static final long SQE_USER_DATA = 32;
    private static final long CQE_SIZE = 16;
    private static final long CQE_RES = 8;

    /** An int of a ring's memory, read with acquire and written with release where the kernel shares it. */
    private static final VarHandle INT = JAVA_INT.varHandle();

    private static final MethodHandle MMAP = Ffm.function("mmap", FunctionDescriptor.of(JAVA_LONG, JAVA_LONG,
            JAVA_LONG, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_LONG));
    private static final MethodHandle MUNMAP = Ffm.function("munmap",
            FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG));
    private static final MethodHandle CLOSE = Ffm.function("close", FunctionDescriptor.of(JAVA_INT, JAVA_INT));

    private static final ConcurrentHashMap<Long, Ring> RINGS = new ConcurrentHashMap<>();
    private static final AtomicLong NEXT_HANDLE = new AtomicLong(1);

    private IoRingBinding() {}

    /** A ring's descriptor and its three mappings, with the offsets of the words and arrays in them. */
    private static final class Ring {
        final int fd;
        final int sqEntries;
        final long sqRingAddress;
        final long sqRingSize;
        final long cqRingAddress; // sqRingAddress itself where the kernel maps both at once
        final long cqRingSize;
        final long sqesAddress;
        final long sqesSize;
        final MemorySegment sqRing;
        final MemorySegment cqRing;
        final MemorySegment sqes;
        final long sqHead;
        final long sqTail;
        final int sqMask;
        final long sqArray;
        final long cqHead;
        final long cqTail;
        final int cqMask;
        final long cqes;

        Ring(int fd, MemorySegment params, long sqRingAddress, long sqRingSize, long cqRingAddress, long cqRingSize,
             long sqesAddress, long sqesSize) {
            this.fd = fd;
            this.sqEntries = params.get(JAVA_INT, PARAMS_SQ_ENTRIES);
            this.sqRingAddress = sqRingAddress;
            this.sqRingSize = sqRingSize;
            this.cqRingAddress = cqRingAddress;
            this.cqRingSize = cqRingSize;
            this.sqesAddress = sqesAddress;
            this.sqesSize = sqesSize;
            sqRing = MemorySegment.ofAddress(sqRingAddress).reinterpret(sqRingSize);
            cqRing = MemorySegment.ofAddress(cqRingAddress).reinterpret(cqRingSize);
            sqes = MemorySegment.ofAddress(sqesAddress).reinterpret(sqesSize);
            sqHead = unsigned(params, PARAMS_SQ_OFF + SQ_OFF_HEAD);
            sqTail = unsigned(params, PARAMS_SQ_OFF + SQ_OFF_TAIL);
            sqMask = sqRing.get(JAVA_INT, unsigned(params, PARAMS_SQ_OFF + SQ_OFF_RING_MASK));
            sqArray = unsigned(params, PARAMS_SQ_OFF + SQ_OFF_ARRAY);
            cqHead = unsigned(params, PARAMS_CQ_OFF + CQ_OFF_HEAD);
            cqTail = unsigned(params, PARAMS_CQ_OFF + CQ_OFF_TAIL);
            cqMask = cqRing.get(JAVA_INT, unsigned(params, PARAMS_CQ_OFF + CQ_OFF_RING_MASK));
            cqes = unsigned(params, PARAMS_CQ_OFF + CQ_OFF_CQES);
        }
    }

    /**
     * A ring of at least entries submissions: its handle, or -errno. -ENOSYS where the kernel is older than 5.6 (no
     * IORING_OP_READ and WRITE, whose mark is IORING_FEAT_RW_CUR_POS), or where a seccomp profile refuses io_uring.
     */
    static long open(int entries) {
        if (entries < 1 || entries > MAX_ENTRIES) return -EINVAL;
        MemorySegment params = Ffm.scratch().out.asSlice(0, PARAMS_SIZE);
        params.fill((byte) 0);
        long rc = Ffm.syscall(Ffm.ARCH.ioUringSetup, entries, params.address(), 0, 0, 0, 0);
        if (rc < 0) return rc;
        int fd = (int) rc;
        int features = params.get(JAVA_INT, PARAMS_FEATURES);
        if ((features & IORING_FEAT_RW_CUR_POS) == 0) {
            closeDescriptor(fd);
            return -Ffm.ENOSYS;
        }
        long sqEntries = unsigned(params, PARAMS_SQ_ENTRIES);
        long cqEntries = unsigned(params, PARAMS_CQ_ENTRIES);
        long sqRingSize = unsigned(params, PARAMS_SQ_OFF + SQ_OFF_ARRAY) + sqEntries * 4; // sq_entries indexes
        long cqRingSize = unsigned(params, PARAMS_CQ_OFF + CQ_OFF_CQES) + cqEntries * CQE_SIZE;
        boolean single = (features & IORING_FEAT_SINGLE_MMAP) != 0;
        if (single && cqRingSize > sqRingSize) sqRingSize = cqRingSize;
        long sqesSize = sqEntries * SQE_SIZE;
        long sqRing = map(sqRingSize, fd, IORING_OFF_SQ_RING);
        long cqRing = sqRing < 0 || single ? sqRing : map(cqRingSize, fd, IORING_OFF_CQ_RING);
        long sqes = cqRing < 0 ? cqRing : map(sqesSize, fd, IORING_OFF_SQES);
        if (sqes < 0) {
            long error = sqes;
            if (cqRing >= 0 && cqRing != sqRing) unmap(cqRing, cqRingSize);
            if (sqRing >= 0) unmap(sqRing, sqRingSize);
            closeDescriptor(fd);
            return error;
        }
        Ring ring = new Ring(fd, params, sqRing, sqRingSize, cqRing, single ? sqRingSize : cqRingSize, sqes,
                sqesSize);
        long handle = NEXT_HANDLE.getAndIncrement();
        RINGS.put(handle, ring);
        return handle;
    }

    /**
     * Queues count requests and submits them in one io_uring_enter; returns count, or -errno with none of them
     * queued. Each request: ops[i] (IoRing's NOP, READ, WRITE), fds[i], buffers[i] from positions[i] for lengths[i]
     * bytes (direct buffers, bounds checked here), offsets[i], flags[i] (DONTCACHE, DSYNC) and tags[i], which its
     * completion carries.
     */
    static int submit(long handle, int count, int[] ops, int[] fds, ByteBuffer[] buffers, int[] positions,
                      int[] lengths, long[] offsets, int[] flags, long[] tags) {
        Ring ring = RINGS.get(handle);
        if (ring == null || count < 1) return -EINVAL;
        if (ops.length < count || fds.length < count || buffers.length < count || positions.length < count
                || lengths.length < count || offsets.length < count || flags.length < count || tags.length < count) {
            return -EINVAL;
        }
        MemorySegment sq = ring.sqRing;
        int head = (int) INT.getAcquire(sq, ring.sqHead);
        int tail = sq.get(JAVA_INT, ring.sqTail); // only this thread writes it
        if (Integer.compareUnsigned(count, ring.sqEntries - (tail - head)) > 0) return -EBUSY;
        try {
            for (int i = 0; i < count; i++) {
                int op = ops[i];
                int length = lengths[i];
                long offset = offsets[i];
                int rw = flags[i];
                if (op < IoRing.NOP || op > IoRing.WRITE || (rw & ~(DONTCACHE | DSYNC)) != 0) return -EINVAL;
                long address = 0;
                if (op != IoRing.NOP) {
                    if (offset < 0 || length < 0) return -EINVAL;
                    address = directRange(buffers[i], positions[i], length);
                    if (address == 0 && length > 0) return -EFAULT;
                }
                int slot = (tail + i) & ring.sqMask;
                long at = slot * SQE_SIZE;
                for (long word = 0; word < SQE_SIZE; word += 8) ring.sqes.set(JAVA_LONG, at + word, 0);
                ring.sqes.set(JAVA_BYTE, at + SQE_OPCODE, (byte) (op == IoRing.READ ? IORING_OP_READ
                        : op == IoRing.WRITE ? IORING_OP_WRITE : IORING_OP_NOP));
                ring.sqes.set(JAVA_INT, at + SQE_FD, op == IoRing.NOP ? -1 : fds[i]);
                ring.sqes.set(JAVA_LONG, at + SQE_OFF, offset);
                ring.sqes.set(JAVA_LONG, at + SQE_ADDR, address);
                ring.sqes.set(JAVA_INT, at + SQE_LEN, length);
                ring.sqes.set(JAVA_INT, at + SQE_RW_FLAGS, ((rw & DSYNC) != 0 ? RWF_DSYNC : 0)
                        | ((rw & DONTCACHE) != 0 ? RWF_DONTCACHE : 0));
                ring.sqes.set(JAVA_LONG, at + SQE_USER_DATA, tags[i]);
                sq.set(JAVA_INT, ring.sqArray + 4L * slot, slot);
            }
            INT.setRelease(sq, ring.sqTail, tail + count);
            return enter(ring, head, tail, count);
        } finally {
            Reference.reachabilityFence(buffers); // the kernel takes their memory by raw address
        }
    }

    /**
     * io_uring_enter until every queued request is taken, earlier leftovers too: the kernel takes them from the
     * queue's head. EINTR is retried; a first refusal that took nothing unqueues this batch again.
     */
    private static int enter(Ring ring, int head, int tail, int count) {
        MemorySegment sq = ring.sqRing;
        for (boolean first = true;; first = false) {
            int queued = tail + count - (int) INT.getAcquire(sq, ring.sqHead);
            if (queued == 0) return count;
            long taken = Ffm.syscall(Ffm.ARCH.ioUringEnter, ring.fd, Integer.toUnsignedLong(queued), 0, 0, 0, 0);
            // Without SQPOLL the kernel reads the queue only inside io_uring_enter: nothing taken is safe to undo.
            if (taken < 0 && first && (int) INT.getAcquire(sq, ring.sqHead) == head) {
                INT.setRelease(sq, ring.sqTail, tail);
                return (int) taken;
            }
            // Some were taken, or none now: the rest stay queued for the next submission's io_uring_enter.
            if (taken <= 0) return count;
        }
    }

    /**
     * The address of [position, position + length) of a direct buffer, whose index 0 is what position counts from
     * (as the JNI layer's GetDirectBufferAddress); 0 when the buffer is not direct or the range not within its
     * capacity. Memory of an arena is checked as FileChannel checks it: freed memory (the arena closed) would be
     * used by the kernel, and another thread's confined arena is not this thread's to use.
     */
    private static long directRange(ByteBuffer buffer, int position, int length) {
        if (buffer == null || position < 0 || length < 0 || !buffer.isDirect()) return 0;
        // All of the buffer, from index 0 to its capacity, whatever its position and limit (read once, here).
        MemorySegment segment = MemorySegment.ofBuffer(buffer.duplicate().clear());
        if ((long) position + length > segment.byteSize()) return 0;
        if (!segment.scope().isAlive()) {
            throw new IllegalStateException("Already closed: the buffer's memory was freed (its arena is closed)");
        }
        if (!segment.isAccessibleBy(Thread.currentThread())) {
            throw new WrongThreadException("the buffer's memory belongs to an arena confined to another thread");
        }
        return segment.address() + position;
    }

    /**
     * Waits until at least min completions are there (0: does not wait), then takes up to the arrays' length of
     * them: tags[i] and results[i] (bytes, or -errno). Returns how many, or -errno.
     */
    static int reap(long handle, int min, long[] tags, int[] results) {
        Ring ring = RINGS.get(handle);
        if (ring == null || min < 0) return -EINVAL;
        int room = tags.length;
        if (results.length < room || room < 1) return -EINVAL;
        MemorySegment cq = ring.cqRing;
        int head = cq.get(JAVA_INT, ring.cqHead); // only this thread writes it
        while (Integer.compareUnsigned((int) INT.getAcquire(cq, ring.cqTail) - head, min) < 0) {
            long rc = Ffm.syscall(Ffm.ARCH.ioUringEnter, ring.fd, 0, min, IORING_ENTER_GETEVENTS, 0, 0);
            if (rc < 0) return (int) rc;
        }
        int tail = (int) INT.getAcquire(cq, ring.cqTail);
        int taken = 0;
        while (head != tail && taken < room) {
            long at = ring.cqes + (head & ring.cqMask) * CQE_SIZE;
            tags[taken] = cq.get(JAVA_LONG, at);
            results[taken] = cq.get(JAVA_INT, at + CQE_RES);
            head++;
            taken++;
        }
        INT.setRelease(cq, ring.cqHead, head);
        return taken;
    }

    /** Unmaps the ring and closes its descriptor: 0 or -errno; -EINVAL for a handle closed or never opened. */
    static int close(long handle) {
        Ring ring = RINGS.remove(handle);
        if (ring == null) return -EINVAL;
        unmap(ring.sqesAddress, ring.sqesSize);
        if (ring.cqRingAddress != ring.sqRingAddress) unmap(ring.cqRingAddress, ring.cqRingSize);
        unmap(ring.sqRingAddress, ring.sqRingSize);
        return (int) closeDescriptor(ring.fd);
    }

    /** mmap of the ring's part at offset: its address, or -errno. */
    private static long map(long size, int fd, long offset) {
        return Ffm.once("mmap", state -> (long) MMAP.invokeExact(state, 0L, size, PROT_READ | PROT_WRITE,
                MAP_SHARED | MAP_POPULATE, fd, offset));
    }

    private static void unmap(long address, long size) {
        Ffm.once("munmap", state -> (int) MUNMAP.invokeExact(state, address, size));
    }

    private static long closeDescriptor(int fd) {
        return Ffm.once("close", state -> (int) CLOSE.invokeExact(state, fd));
    }

    private static long unsigned(MemorySegment segment, long offset) {
        return Integer.toUnsignedLong(segment.get(JAVA_INT, offset));
    }
}

package io.pagewise.internal;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@link Mincore}'s calls by FFM (JDK 22+), the twin of the JNI binding with its methods. Mincore has checked the
 * arguments; an offset that is not page aligned is refused here, where the page size is known.
 */
final class MincoreBinding {
    private static final long CHUNK_BYTES = 256L << 20;
    private static final int PROT_NONE = 0;
    private static final int PROT_READ = 1;
    private static final int MAP_SHARED = 1;
    private static final long MAP_FAILED = -1;
    private static final int SC_PAGESIZE = 30;

    private static final MethodHandle SYSCONF = Ffm.function("sysconf", FunctionDescriptor.of(JAVA_LONG, JAVA_INT));
    private static final MethodHandle MMAP = Ffm.function("mmap", FunctionDescriptor.of(JAVA_LONG, JAVA_LONG,
            JAVA_LONG, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_LONG));
    private static final MethodHandle MINCORE = Ffm.function("mincore",
            FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG));
    private static final MethodHandle MUNMAP = Ffm.function("munmap",
            FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG));

    private static final AtomicLong MINCORE_CALLS = new AtomicLong();
    private static final AtomicLong CACHESTAT_CALLS = new AtomicLong();
    /**
     * A chunk is mapped PROT_NONE, so that nothing can touch (and fault in) the pages being counted. qemu-user
     * refuses mincore on such a mapping with ENOMEM: where that happens, chunks are mapped readable from then on.
     */
    private static volatile boolean protNoneRefused;

    private MincoreBinding() {}

    static int pageSize() {
        return (int) Ffm.once("sysconf", state -> (long) SYSCONF.invokeExact(state, SC_PAGESIZE));
    }

    static long[] syscallCounts() {
        return new long[] {MINCORE_CALLS.get(), CACHESTAT_CALLS.get()};
    }

    static long residentPages(int fd, long offset, long length) {
        long[] count = {0};
        int rc = scan(fd, offset, length, (vector, pages, firstPage) -> {
            for (long i = 0; i < pages; i++) count[0] += vector.get(JAVA_BYTE, i) & 1;
        });
        return rc < 0 ? rc : count[0];
    }

    static long cachedPages(int fd, long offset, long length) {
        MemorySegment scratch = Ffm.scratch().out;
        long rc = cachestat(fd, offset, length, scratch);
        return rc < 0 ? rc : scratch.get(JAVA_LONG, 16); // nr_cache
    }

    static int cacheStat(int fd, long offset, long length, long[] out) {
        MemorySegment scratch = Ffm.scratch().out;
        long rc = cachestat(fd, offset, length, scratch);
        if (rc < 0) return (int) rc;
        for (int i = 0; i < 5; i++) out[i] = scratch.get(JAVA_LONG, 16 + 8L * i);
        return 0;
    }

    /**
     * One cachestat call, counted: struct cachestat_range at scratch offset 0 (16 bytes), the struct cachestat it
     * fills at offset 16 (40 bytes); @return 0 or -errno
     */
    private static long cachestat(int fd, long offset, long length, MemorySegment scratch) {
        scratch.set(JAVA_LONG, 0, offset);
        scratch.set(JAVA_LONG, 8, length);
        scratch.asSlice(16, 40).fill((byte) 0);
        CACHESTAT_CALLS.incrementAndGet();
        return Ffm.syscall(Ffm.ARCH.cachestat, fd, scratch.address(), scratch.address() + 16, 0, 0, 0);
    }

    static int residentBitmap(int fd, long offset, long length, byte[] out) {
        byte[] bits = new byte[out.length];
        int rc = scan(fd, offset, length, (vector, chunkPages, firstPage) -> {
            for (long i = 0; i < chunkPages; i++) {
                if ((vector.get(JAVA_BYTE, i) & 1) != 0) bits[(int) ((firstPage + i) / 8)] |= (byte) (1 << ((firstPage + i) % 8));
            }
        });
        if (rc == 0) System.arraycopy(bits, 0, out, 0, out.length);
        return rc;
    }

    @FunctionalInterface
    private interface ChunkVisitor {
        void visit(MemorySegment vector, long pages, long firstPage);
    }

    /** Calls visit for each chunk's residency vector; returns 0 or -errno. */
    private static int scan(int fd, long offset, long length, ChunkVisitor visit) {
        long page = pageSize();
        if (offset % page != 0) return -Errno.EINVAL;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment vector = arena.allocate(CHUNK_BYTES / page);
            for (long done = 0; done < length; ) {
                long chunk = Math.min(length - done, CHUNK_BYTES);
                int rc = askChunk(fd, offset + done, chunk, vector);
                if (rc < 0) return rc;
                visit.visit(vector, (chunk + page - 1) / page, done / page);
                done += chunk;
            }
            return 0;
        }
    }

    private static int askChunk(int fd, long offset, long length, MemorySegment vector) {
        if (protNoneRefused) return ask(fd, offset, length, PROT_READ, vector);
        int rc = ask(fd, offset, length, PROT_NONE, vector);
        // A real ENOMEM, or the readable mapping failed too: the first error is the one to report.
        if (rc != -Errno.ENOMEM || ask(fd, offset, length, PROT_READ, vector) != 0) return rc;
        protNoneRefused = true;
        return 0;
    }

    /** Maps [offset, offset + length) of fd with prot and asks mincore for it; returns 0 or -errno. */
    private static int ask(int fd, long offset, long length, int prot, MemorySegment vector) {
        MemorySegment state = Ffm.scratch().callState;
        try {
            long map = (long) MMAP.invokeExact(state, 0L, length, prot, MAP_SHARED, fd, offset);
            if (map == MAP_FAILED) return -Ffm.errno(state);
            MINCORE_CALLS.incrementAndGet();
            int rc = (int) MINCORE.invokeExact(state, map, length, vector.address());
            int errno = rc < 0 ? Ffm.errno(state) : 0;
            int unmapped = (int) MUNMAP.invokeExact(state, map, length);
            assert unmapped == 0 : "munmap of a mapping just made";
            return -errno;
        } catch (Throwable e) {
            throw Ffm.failed("mmap/mincore", e);
        }
    }
}

package io.pagewise.internal;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.util.Locale;

/**
 * What the FFM bindings share (JDK 22+): the C library's functions looked up by name, the
 * errno each call leaves, the system call numbers of this architecture, and per-thread scratch memory.
 *
 * <p>Every function is bound with errno captured, so a handle's first argument is the call-state segment; a
 * call that fails returns {@code -errno}, as the JNI layer's C does. Pointers are passed as {@code long}
 * addresses: every one points into scratch memory held by the calling thread or into a direct buffer the caller
 * keeps reachable until the call returns.
 */
final class Ffm {
    static final int EINTR = 4;
    static final int ENOSYS = 38;
    static final int EOPNOTSUPP = 95;

    private static final Linker LINKER = Linker.nativeLinker();
    private static final SymbolLookup C_LIBRARY = LINKER.defaultLookup();
    private static final MemoryLayout CALL_STATE = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO = CALL_STATE.varHandle(MemoryLayout.PathElement.groupElement("errno"));
    private static final Linker.Option CAPTURE_ERRNO = Linker.Option.captureCallState("errno");

    /** This architecture's system call numbers, for the calls old glibc has no function for. */
    static final Arch ARCH = Arch.current();

    /** syscall(2) with a number and six arguments, all longs: enough for every call made through it. */
    private static final MethodHandle SYSCALL = function("syscall", FunctionDescriptor.of(JAVA_LONG, JAVA_LONG,
            JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG), 1);

    private static final ThreadLocal<Scratch> SCRATCH = ThreadLocal.withInitial(Scratch::new);

    private Ffm() {}

    /** Struct sizes and system call numbers of the two architectures the library supports. */
    enum Arch {
        X86_64(327, 328, 206, 207, 209, 208, 332, 0x4000),
        AARCH64(286, 287, 0, 1, 2, 4, 291, 0x10000);

        final long preadv2;
        final long pwritev2;
        final long ioSetup;
        final long ioDestroy;
        final long ioSubmit;
        final long ioGetevents;
        final long statx;
        /** O_DIRECT, the one open flag the library uses whose value differs between the two. */
        final int oDirect;
        /** cachestat(2), Linux 6.5: the same number on every architecture. */
        final long cachestat = 451;
        /** io_uring_setup(2) and io_uring_enter(2), Linux 5.1: the same numbers on every architecture. */
        final long ioUringSetup = 425;
        final long ioUringEnter = 426;

        Arch(long preadv2, long pwritev2, long ioSetup, long ioDestroy, long ioSubmit, long ioGetevents, long statx,
             int oDirect) {
            this.preadv2 = preadv2;
            this.pwritev2 = pwritev2;
            this.ioSetup = ioSetup;
            this.ioDestroy = ioDestroy;
            this.ioSubmit = ioSubmit;
            this.ioGetevents = ioGetevents;
            this.statx = statx;
            this.oDirect = oDirect;
        }

        static Arch current() {
            String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
            String os = System.getProperty("os.name", "");
            if (!os.equals("Linux")) throw new UnsatisfiedLinkError("the FFM calls are for Linux, not " + os);
            switch (arch) {
                case "amd64": case "x86_64": return X86_64;
                case "aarch64": case "arm64": return AARCH64;
                default: throw new UnsatisfiedLinkError("the FFM calls know the system calls of x86_64 and aarch64,"
                        + " not " + arch);
            }
        }
    }

    /**
     * A C library function with errno captured; firstVariadic is the index of its first variadic argument, or -1.
     *
     * @throws UnsatisfiedLinkError naming the function when the C library lacks it
     */
    static MethodHandle function(String name, FunctionDescriptor descriptor, int firstVariadic) {
        Linker.Option[] options = firstVariadic < 0 ? new Linker.Option[] {CAPTURE_ERRNO}
                : new Linker.Option[] {CAPTURE_ERRNO, Linker.Option.firstVariadicArg(firstVariadic)};
        return LINKER.downcallHandle(lookUp(name), descriptor, options);
    }

    static MethodHandle function(String name, FunctionDescriptor descriptor) {
        return function(name, descriptor, -1);
    }

    /** A function that sets no errno, bound without capturing it. */
    static MethodHandle plainFunction(String name, FunctionDescriptor descriptor) {
        return LINKER.downcallHandle(lookUp(name), descriptor);
    }

    private static MemorySegment lookUp(String name) {
        return C_LIBRARY.find(name).orElseThrow(() -> new UnsatisfiedLinkError("the C library has no function " + name));
    }

    /** The errno the last call on this thread through state left. */
    static int errno(MemorySegment state) {
        return (int) ERRNO.get(state, 0L);
    }

    /** result, or -errno when the call failed (returned -1). */
    static long checked(long result, MemorySegment state) {
        return result == -1 ? -errno(state) : result;
    }

    /** syscall(number, a...) retried on EINTR; the result or -errno (ENOSYS where the kernel lacks the call). */
    static long syscall(long number, long a1, long a2, long a3, long a4, long a5, long a6) {
        MemorySegment state = scratch().callState;
        while (true) {
            long n;
            try {
                n = (long) SYSCALL.invokeExact(state, number, a1, a2, a3, a4, a5, a6);
            } catch (Throwable e) {
                throw failed("syscall", e);
            }
            if (n != -1) return n;
            int errno = errno(state);
            if (errno != EINTR) return -errno;
        }
    }

    /** A downcall made with the calling thread's call state; returns the C function's result. */
    @FunctionalInterface
    interface Call {
        long invoke(MemorySegment callState) throws Throwable;
    }

    /** call, retried while it fails with EINTR: its result, or -errno when it failed (returned a negative value). */
    static long retried(String function, Call call) {
        MemorySegment state = scratch().callState;
        while (true) {
            long rc = once(function, call, state);
            if (rc >= 0) return rc;
            int errno = errno(state);
            if (errno != EINTR) return -errno;
        }
    }

    /** call once: its result, or -errno when it failed (returned a negative value). */
    static long once(String function, Call call) {
        MemorySegment state = scratch().callState;
        long rc = once(function, call, state);
        return rc >= 0 ? rc : -errno(state);
    }

    private static long once(String function, Call call, MemorySegment state) {
        try {
            return call.invoke(state);
        } catch (Throwable e) {
            throw failed(function, e);
        }
    }

    /** A downcall of the exact type cannot throw; if it did, the call's state is unknown. */
    static AssertionError failed(String function, Throwable e) {
        return new AssertionError(function + " downcall threw", e);
    }

    /** The calling thread's scratch memory. */
    static Scratch scratch() {
        return SCRATCH.get();
    }

    /**
     * Memory each thread reuses for its calls, freed with the thread's last reference to it. Each call uses it for
     * its duration only, and no call made with it calls another that uses the same field.
     */
    static final class Scratch {
        /** Vectors up to this many buffers are described here; longer ones get memory of their own. */
        static final int IOVECS = 64;
        static final long IOVEC_SIZE = 16; // struct iovec { void *iov_base; size_t iov_len; } on LP64

        final MemorySegment callState;
        final MemorySegment iovecs;
        /** struct iocb (64 bytes), then the pointer to it io_submit takes, then one struct io_event (32). */
        final MemorySegment aio;
        /** Structs the kernel fills in: statx (256 bytes), statfs, cachestat, or a count. */
        final MemorySegment out;

        private Scratch() {
            Arena arena = Arena.ofAuto();
            callState = arena.allocate(CALL_STATE);
            iovecs = arena.allocate(IOVEC_SIZE * IOVECS, 8);
            aio = arena.allocate(64 + 8 + 32, 8);
            out = arena.allocate(256, 8);
        }
    }

}

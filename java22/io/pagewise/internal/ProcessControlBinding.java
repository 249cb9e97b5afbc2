package io.pagewise.internal;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

/**
 * The FFM version (JDK 22+) of the class that pairs with {@code native/process_control.c}, with its API and contract:
 * what a service does to its own process. setgroups, setgid and setuid are glibc's, which change every thread. Each
 * call returns a result or {@code -errno}.
 */
final class ProcessControlBinding {
    private static final int EBUSY = 16;
    private static final int PR_SET_PDEATHSIG = 1;

    private static final MethodHandle DUP2 = Ffm.function("dup2", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT));
    private static final MethodHandle CLOSE = Ffm.function("close", FunctionDescriptor.of(JAVA_INT, JAVA_INT));
    private static final MethodHandle PRCTL = Ffm.function("prctl",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG), 1);
    private static final MethodHandle SETGROUPS = Ffm.function("setgroups",
            FunctionDescriptor.of(JAVA_INT, JAVA_LONG, ADDRESS));
    private static final MethodHandle SETGID = Ffm.function("setgid", FunctionDescriptor.of(JAVA_INT, JAVA_INT));
    private static final MethodHandle SETUID = Ffm.function("setuid", FunctionDescriptor.of(JAVA_INT, JAVA_INT));

    private ProcessControlBinding() {}

    /** Makes descriptor to refer to what from does (dup2), then closes from; @return to, or -errno */
    static int moveDescriptor(int from, int to) {
        long rc;
        do {
            rc = Ffm.once("dup2", state -> (int) DUP2.invokeExact(state, from, to));
        } while (rc == -Ffm.EINTR || rc == -EBUSY);
        if (rc < 0) return (int) rc;
        Ffm.once("close", state -> (int) CLOSE.invokeExact(state, from)); // the copy at `to` keeps the socket open
        return to;
    }

    /** Has the kernel send signal to this process when its parent ends (prctl PR_SET_PDEATHSIG); @return 0 or -errno */
    static int parentDeathSignal(int signal) {
        return (int) Ffm.once("prctl", state -> (int) PRCTL.invokeExact(state, PR_SET_PDEATHSIG, (long) signal, 0L, 0L, 0L));
    }

    /** Runs as uid with gid as its only group, every thread (glibc's setgroups, setgid, setuid); @return 0 or -errno */
    static int dropPrivileges(int uid, int gid) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment groups = arena.allocate(JAVA_INT);
            groups.set(JAVA_INT, 0, gid);
            long rc = Ffm.once("setgroups", state -> (int) SETGROUPS.invokeExact(state, 1L, groups));
            if (rc == 0) rc = Ffm.once("setgid", state -> (int) SETGID.invokeExact(state, gid));
            if (rc == 0) rc = Ffm.once("setuid", state -> (int) SETUID.invokeExact(state, uid));
            return (int) rc;
        }
    }
}

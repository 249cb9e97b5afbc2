package io.pagewise.internal;

/**
 * Pairs with {@code native/process_control.c}: what a service does to its own process. Each call returns a result or
 * {@code -errno}; the caller checks that the native library is loaded first.
 */
public final class ProcessControl {
    /** SIGTERM on Linux (every architecture): the JVM runs its shutdown hooks for it. */
    public static final int SIGTERM = 15;

    private ProcessControl() {}

    /** Makes descriptor to refer to what from does (dup2), then closes from; @return to, or -errno */
    public static int moveDescriptor(int from, int to) {
        return moveDescriptor0(from, to);
    }

    /** Has the kernel send signal to this process when its parent ends (prctl PR_SET_PDEATHSIG); @return 0 or -errno */
    public static int parentDeathSignal(int signal) {
        return parentDeathSignal0(signal);
    }

    /** Runs as uid with gid as its only group, every thread (glibc's setgroups, setgid, setuid); @return 0 or -errno */
    public static int dropPrivileges(int uid, int gid) {
        return dropPrivileges0(uid, gid);
    }

    private static native int moveDescriptor0(int from, int to);

    private static native int parentDeathSignal0(int signal);

    private static native int dropPrivileges0(int uid, int gid);
}

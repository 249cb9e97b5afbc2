package io.pagewise.internal;

/**
 * What a service does to its own process: the topic's one Java home (its numbers and checks), for every JDK.
 * {@link ProcessControlBinding} makes the calls, by JNI into {@code native/process_control.c} or on JDK 22+ by FFM.
 * Each call returns a result or {@code -errno}; the caller checks that the native library is loaded first.
 */
public final class ProcessControl {
    /** SIGTERM on Linux (every architecture): the JVM runs its shutdown hooks for it. */
    public static final int SIGTERM = 15;

    private ProcessControl() {}

    /** Makes descriptor to refer to what from does (dup2), then closes from; @return to, or -errno */
    public static int moveDescriptor(int from, int to) {
        if (from < 0 || to < 0) return -Errno.EINVAL;
        if (from == to) return to;
        return ProcessControlBinding.moveDescriptor(from, to);
    }

    /** Has the kernel send signal to this process when its parent ends (prctl PR_SET_PDEATHSIG); @return 0 or -errno */
    public static int parentDeathSignal(int signal) {
        if (signal <= 0 || signal >= 65) return -Errno.EINVAL;
        return ProcessControlBinding.parentDeathSignal(signal);
    }

    /** Runs as uid with gid as its only group, every thread (glibc's setgroups, setgid, setuid); @return 0 or -errno */
    public static int dropPrivileges(int uid, int gid) {
        if (uid < 0 || gid < 0) return -Errno.EINVAL;
        return ProcessControlBinding.dropPrivileges(uid, gid);
    }
}

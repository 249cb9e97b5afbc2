package io.pagewise.internal;

/**
 * {@link ProcessControl}'s calls by JNI, into {@code native/process_control.c}; the FFM twin (JDK 22+) has the same
 * methods.
 */
final class ProcessControlBinding {
    private ProcessControlBinding() {}

    static int moveDescriptor(int from, int to) {
        return moveDescriptor0(from, to);
    }

    static int parentDeathSignal(int signal) {
        return parentDeathSignal0(signal);
    }

    static int dropPrivileges(int uid, int gid) {
        return dropPrivileges0(uid, gid);
    }

    private static native int moveDescriptor0(int from, int to);

    private static native int parentDeathSignal0(int signal);

    private static native int dropPrivileges0(int uid, int gid);
}

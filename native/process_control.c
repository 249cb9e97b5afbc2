/* process_control.c: what a service does to its own process (Java: ProcessControl, natives in
 * ProcessControlBinding): take over a socket systemd passed, die with its parent, give up root. setgroups, setgid
 * and setuid go through glibc's wrappers, which change the credentials of every thread of the process; the raw
 * system calls would change the calling thread's only. */
#include "pagewise.h"

#include <grp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

/* Makes descriptor `to` refer to what `from` does, then closes `from`; returns `to` or -errno. */
static jint
moveDescriptor0(JNIEnv *env, jclass cls, jint from, jint to)
{
    (void) env; (void) cls;
    if (from < 0 || to < 0)
        return -EINVAL;
    if (from == to)
        return to;
    int rc;
    do {
        rc = dup2(from, to);
    } while (rc == -1 && (errno == EINTR || errno == EBUSY));
    if (rc < 0)
        return -errno;
    close(from); /* the copy at `to` keeps the socket open whatever close says */
    return to;
}

/* Asks the kernel to send signal to this process when the thread's parent process ends; 0 or -errno. */
static jint
parentDeathSignal0(JNIEnv *env, jclass cls, jint signal)
{
    (void) env; (void) cls;
    if (signal <= 0 || signal >= 65)
        return -EINVAL;
    return prctl(PR_SET_PDEATHSIG, (unsigned long) signal, 0UL, 0UL, 0UL) < 0 ? -errno : 0;
}

/* Runs as gid (its only group) and uid from now on, every thread; 0 or -errno (the step that failed is told by
 * the value: -errno of setgroups, setgid or setuid, in that order). */
static jint
dropPrivileges0(JNIEnv *env, jclass cls, jint uid, jint gid)
{
    (void) env; (void) cls;
    if (uid < 0 || gid < 0)
        return -EINVAL;
    gid_t group = (gid_t) gid;
    if (setgroups(1, &group) < 0 || setgid(group) < 0 || setuid((uid_t) uid) < 0)
        return -errno;
    return 0;
}

/* Name and JNI signature of each native method of ProcessControl. */
static const JNINativeMethod METHODS[] = {
    { "moveDescriptor0", "(II)I", (void *) moveDescriptor0 },
    { "parentDeathSignal0", "(I)I", (void *) parentDeathSignal0 },
    { "dropPrivileges0", "(II)I", (void *) dropPrivileges0 },
};

int pw_register_process_control(JNIEnv *env)
{
    return pw_register(env, PW_CLASS("ProcessControlBinding"), METHODS, PW_COUNT(METHODS));
}

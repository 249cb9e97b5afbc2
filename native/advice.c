/* advice.c: page-cache advice and durability calls (Java: Advice, natives in AdviceBinding). */
#include "pagewise.h"

#include <fcntl.h>
#include <unistd.h>

/* Advice values as numbered by AccessHint's native codes. */
static const int ADVICE[] = {
    POSIX_FADV_NORMAL, POSIX_FADV_SEQUENTIAL, POSIX_FADV_RANDOM,
    POSIX_FADV_NOREUSE, POSIX_FADV_WILLNEED, POSIX_FADV_DONTNEED,
};

/* posix_fadvise returns the error number instead of setting errno. */
static jint
fadvise0(JNIEnv *env, jclass cls, jint fd, jlong offset, jlong length, jint advice)
{
    (void) env; (void) cls;
    if (offset < 0 || length < 0 || advice < 0 || advice >= (jint) (sizeof ADVICE / sizeof ADVICE[0]))
        return -EINVAL;
    int rc;
    do {
        rc = posix_fadvise(fd, (off_t) offset, (off_t) length, ADVICE[advice]);
    } while (rc == EINTR);
    return -rc;
}

/* flags: any combination of SYNC_FILE_RANGE_WAIT_BEFORE (1), WRITE (2), WAIT_AFTER (4). */
static jint
syncFileRange0(JNIEnv *env, jclass cls, jint fd, jlong offset, jlong length, jint flags)
{
    (void) env; (void) cls;
    if (offset < 0 || length < 0 || (flags & ~(SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
                                                SYNC_FILE_RANGE_WAIT_AFTER)) != 0)
        return -EINVAL;
    int rc;
    PW_RETRY(rc, sync_file_range(fd, (off64_t) offset, (off64_t) length, (unsigned int) flags));
    return rc < 0 ? -errno : 0;
}

static jint
fdatasync0(JNIEnv *env, jclass cls, jint fd)
{
    (void) env; (void) cls;
    int rc;
    PW_RETRY(rc, fdatasync(fd));
    return rc < 0 ? -errno : 0;
}

/* Name and JNI signature of each native method of Advice. */
static const JNINativeMethod METHODS[] = {
    { "fadvise0", "(IJJI)I", (void *) fadvise0 },
    { "syncFileRange0", "(IJJI)I", (void *) syncFileRange0 },
    { "fdatasync0", "(I)I", (void *) fdatasync0 },
};

int pw_register_advice(JNIEnv *env)
{
    return pw_register(env, PW_CLASS("AdviceBinding"), METHODS, PW_COUNT(METHODS));
}

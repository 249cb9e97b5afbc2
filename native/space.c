/* space.c: allocation, holes and zeroing (Java: Space, natives in SpaceBinding). */
#include "pagewise.h"

#include <fcntl.h>
#include <linux/falloc.h>
#include <unistd.h>

static jint
fallocate0(JNIEnv *env, jclass cls, jint fd, jint mode, jlong offset, jlong length)
{
    (void) env; (void) cls;
    if (offset < 0 || length <= 0)
        return -EINVAL;
    int native_mode;
    if (mode == PW_FALLOC_PUNCH_HOLE)
        native_mode = FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE;
    else if (mode == PW_FALLOC_ZERO_RANGE)
        native_mode = FALLOC_FL_ZERO_RANGE;
    else if (mode == PW_FALLOC_ALLOCATE)
        native_mode = 0;
    else
        return -EINVAL;
    int rc;
    PW_RETRY(rc, fallocate(fd, native_mode, (off_t) offset, (off_t) length));
    return rc < 0 ? -errno : 0;
}

/* whence: 0 = SEEK_DATA, 1 = SEEK_HOLE. Returns the offset found or -errno (-ENXIO: none). */
static jlong
seek0(JNIEnv *env, jclass cls, jint fd, jlong offset, jint whence)
{
    (void) env; (void) cls;
    if (offset < 0 || (whence != 0 && whence != 1))
        return -EINVAL;
    off_t rc = lseek(fd, (off_t) offset, whence == 0 ? SEEK_DATA : SEEK_HOLE);
    return rc < 0 ? -errno : (jlong) rc;
}

/* Name and JNI signature of each native method of Space. */
static const JNINativeMethod METHODS[] = {
    { "fallocate0", "(IIJJ)I", (void *) fallocate0 },
    { "seek0", "(IJI)J", (void *) seek0 },
};

int pw_register_space(JNIEnv *env)
{
    return pw_register(env, PW_CLASS("SpaceBinding"), METHODS, PW_COUNT(METHODS));
}

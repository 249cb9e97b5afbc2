/* io.c: positional reads and writes with full-transfer semantics (Java: PositionalIo). */
#include "pagewise.h"

#include <sys/uio.h>
#include <unistd.h>

#ifndef RWF_DSYNC
#define RWF_DSYNC 0x00000002
#endif
#ifndef RWF_DONTCACHE
#define RWF_DONTCACHE 0x00000080 /* Linux >= 6.14; glibc 2.36 lacks it */
#endif

static int rw_flags(jint flags)
{
    int result = 0;
    if (flags & PW_RW_DONTCACHE)
        result |= RWF_DONTCACHE;
    if (flags & PW_RW_DSYNC)
        result |= RWF_DSYNC;
    return result;
}

static ssize_t read_once(int fd, char *to, size_t length, off_t offset, int flags)
{
    if (flags == 0)
        return pread(fd, to, length, offset);
    struct iovec iov = { .iov_base = to, .iov_len = length };
    return preadv2(fd, &iov, 1, offset, flags);
}

static ssize_t write_once(int fd, const char *from, size_t length, off_t offset, int flags)
{
    if (flags == 0)
        return pwrite(fd, from, length, offset);
    struct iovec iov = { .iov_base = (void *) from, .iov_len = length };
    return pwritev2(fd, &iov, 1, offset, flags);
}

/* Reads length bytes at offset into the direct buffer, retrying short reads and EINTR.
 * Returns the bytes read (less than length only at end of file) or -errno. */
static jint
pread0(JNIEnv *env, jclass cls, jint fd, jobject buffer, jint position, jint length, jlong offset, jint flags)
{
    (void) cls;
    if (offset < 0 || (flags & ~PW_RW_ALL) != 0)
        return -EINVAL;
    char *to = pw_direct_range(env, buffer, position, length);
    if (to == NULL)
        return -EFAULT;
    int native_flags = rw_flags(flags);
    jint done = 0;
    while (done < length) {
        ssize_t n = read_once(fd, to + done, (size_t) (length - done), (off_t) (offset + done), native_flags);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if (n == 0)
            break; /* end of file */
        done += (jint) n;
        if ((flags & PW_RW_SHORT_IS_EOF) && done < length)
            break;
    }
    return done;
}

/* Writes length bytes from the direct buffer at offset, retrying short writes and EINTR.
 * Returns length or -errno. */
static jint
pwrite0(JNIEnv *env, jclass cls, jint fd, jobject buffer, jint position, jint length, jlong offset, jint flags)
{
    (void) cls;
    if (offset < 0 || (flags & ~PW_RW_ALL) != 0)
        return -EINVAL;
    const char *from = pw_direct_range(env, buffer, position, length);
    if (from == NULL)
        return -EFAULT;
    int native_flags = rw_flags(flags);
    jint done = 0;
    while (done < length) {
        ssize_t n = write_once(fd, from + done, (size_t) (length - done), (off_t) (offset + done), native_flags);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if (n == 0)
            return -EIO; /* a regular file never accepts zero bytes of a non-empty write */
        done += (jint) n;
    }
    return done;
}

/* Name and JNI signature of each native method of PositionalIo. */
static const JNINativeMethod METHODS[] = {
    { "pread0", "(ILjava/nio/ByteBuffer;IIJI)I", (void *) pread0 },
    { "pwrite0", "(ILjava/nio/ByteBuffer;IIJI)I", (void *) pwrite0 },
};

int pw_register_io(JNIEnv *env)
{
    return pw_register(env, PW_CLASS("PositionalIo"), METHODS, PW_COUNT(METHODS));
}

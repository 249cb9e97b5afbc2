/* io.c: positional scatter/gather reads and writes with full-transfer semantics (Java: PositionalIo). */
#include "pagewise.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/uio.h>
#include <unistd.h>

#ifndef RWF_DSYNC
#define RWF_DSYNC 0x00000002
#endif
#ifndef RWF_DONTCACHE
#define RWF_DONTCACHE 0x00000080 /* Linux >= 6.14; glibc 2.36 lacks it */
#endif
#ifndef IOV_MAX
#define IOV_MAX 1024
#endif

/* The most one read or write transfers on Linux (MAX_RW_COUNT); a larger request comes back short. */
#define MAX_RW_COUNT ((size_t) (INT_MAX & ~4095))

/* Vectors up to this many buffers are described on the stack; longer ones are allocated. */
#define STACK_IOVECS 64

static int rw_flags(jint flags)
{
    int result = 0;
    if (flags & PW_RW_DONTCACHE)
        result |= RWF_DONTCACHE;
    if (flags & PW_RW_DSYNC)
        result |= RWF_DSYNC;
    return result;
}

/* One syscall over count (at most IOV_MAX) iovecs; plain preadv/pwritev when there are no flags (any kernel). */
static ssize_t transfer_once(int fd, const struct iovec *iov, int count, off_t offset, int flags, int writing)
{
    if (writing)
        return flags == 0 ? pwritev(fd, iov, count, offset) : pwritev2(fd, iov, count, offset, flags);
    return flags == 0 ? preadv(fd, iov, count, offset) : preadv2(fd, iov, count, offset, flags);
}

/* Drops the first done bytes from the vector [*first, count): whole iovecs are skipped, a partial one shortened. */
static void advance(struct iovec *iov, int *first, int count, size_t done)
{
    while (*first < count && done >= iov[*first].iov_len) {
        done -= iov[*first].iov_len;
        (*first)++;
    }
    if (*first < count && done > 0) {
        iov[*first].iov_base = (char *) iov[*first].iov_base + done;
        iov[*first].iov_len -= done;
    }
}

/* Transfers every byte of the vector, retrying short transfers and EINTR. A read stops at end of file, or at the
 * first short read with PW_RW_SHORT_IS_EOF. Returns the bytes moved or -errno. */
static jlong transfer_all(int fd, struct iovec *iov, int count, jlong total, jlong offset, jint flags, int writing)
{
    int native_flags = rw_flags(flags);
    int first = 0;
    jlong done = 0;
    while (done < total) {
        size_t asked = 0;
        int batch = count - first < IOV_MAX ? count - first : IOV_MAX;
        for (int i = first; i < first + batch; i++)
            asked += iov[i].iov_len;
        if (asked > MAX_RW_COUNT)
            asked = MAX_RW_COUNT;
        ssize_t n = transfer_once(fd, iov + first, batch, (off_t) (offset + done), native_flags, writing);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if (n == 0) {
            if (writing)
                return -EIO; /* a regular file never accepts zero bytes of a non-empty write */
            break; /* end of file */
        }
        done += n;
        advance(iov, &first, count, (size_t) n);
        if (!writing && (flags & PW_RW_SHORT_IS_EOF) && (size_t) n < asked)
            break;
    }
    return done;
}

/* Describes buffers[0..count) as iovecs, each the range [positions[i], positions[i] + lengths[i]) of a direct buffer.
 * Every range is checked against its buffer's capacity. Returns the total length, or -errno. */
static jlong describe(JNIEnv *env, jobjectArray buffers, jintArray positions, jintArray lengths, jint count,
                      struct iovec *iov)
{
    jint stack_positions[STACK_IOVECS];
    jint stack_lengths[STACK_IOVECS];
    jint *position = count <= STACK_IOVECS ? stack_positions : malloc(sizeof(jint) * (size_t) count);
    jint *length = count <= STACK_IOVECS ? stack_lengths : malloc(sizeof(jint) * (size_t) count);
    jlong total = -ENOMEM;
    jlong sum = 0;
    if (position == NULL || length == NULL)
        goto out;
    (*env)->GetIntArrayRegion(env, positions, 0, count, position);
    (*env)->GetIntArrayRegion(env, lengths, 0, count, length);
    total = -EFAULT;
    if ((*env)->ExceptionCheck(env))
        goto out;
    for (jint i = 0; i < count; i++) {
        jobject buffer = (*env)->GetObjectArrayElement(env, buffers, i);
        if ((*env)->ExceptionCheck(env))
            goto out;
        void *base = pw_direct_range(env, buffer, position[i], length[i]);
        (*env)->DeleteLocalRef(env, buffer);
        if (base == NULL)
            goto out;
        iov[i].iov_base = base;
        iov[i].iov_len = (size_t) length[i];
        sum += length[i];
    }
    total = sum;
out:
    if (position != stack_positions)
        free(position);
    if (length != stack_lengths)
        free(length);
    return total;
}

/* The buffers are direct: the kernel copies to or from their memory while no JNI critical section is held, so the
 * blocking call does not stall the garbage collector. */
static jlong transfer(JNIEnv *env, jint fd, jobjectArray buffers, jintArray positions, jintArray lengths, jint count,
                      jlong offset, jint flags, int writing)
{
    if (offset < 0 || (flags & ~PW_RW_ALL) != 0 || count < 0 || buffers == NULL || positions == NULL
        || lengths == NULL)
        return -EINVAL;
    if (count > (*env)->GetArrayLength(env, buffers) || count > (*env)->GetArrayLength(env, positions)
        || count > (*env)->GetArrayLength(env, lengths))
        return -EINVAL;
    if (count == 0)
        return 0;
    struct iovec stack_iov[STACK_IOVECS];
    struct iovec *iov = count <= STACK_IOVECS ? stack_iov : malloc(sizeof(struct iovec) * (size_t) count);
    if (iov == NULL)
        return -ENOMEM;
    jlong total = describe(env, buffers, positions, lengths, count, iov);
    jlong result = total;
    if (total > 0 && offset > LLONG_MAX - total)
        result = writing ? -EFBIG : -EOVERFLOW;
    else if (total > 0)
        result = transfer_all(fd, iov, count, total, offset, flags, writing);
    if (iov != stack_iov)
        free(iov);
    return result;
}

/* Reads into the buffers' ranges in order from offset. Returns the bytes read (fewer only at end of file, or at a
 * short read with PW_RW_SHORT_IS_EOF) or -errno. */
static jlong preadv0(JNIEnv *env, jclass cls, jint fd, jobjectArray buffers, jintArray positions, jintArray lengths,
                     jint count, jlong offset, jint flags)
{
    (void) cls;
    return transfer(env, fd, buffers, positions, lengths, count, offset, flags, 0);
}

/* Writes the buffers' ranges in order at offset. Returns the bytes written (all of them) or -errno. */
static jlong pwritev0(JNIEnv *env, jclass cls, jint fd, jobjectArray buffers, jintArray positions, jintArray lengths,
                      jint count, jlong offset, jint flags)
{
    (void) cls;
    return transfer(env, fd, buffers, positions, lengths, count, offset, flags, 1);
}

/* Name and JNI signature of each native method of PositionalIo. */
static const JNINativeMethod METHODS[] = {
    { "preadv0", "(I[Ljava/nio/ByteBuffer;[I[IIJI)J", (void *) preadv0 },
    { "pwritev0", "(I[Ljava/nio/ByteBuffer;[I[IIJI)J", (void *) pwritev0 },
};

int pw_register_io(JNIEnv *env)
{
    return pw_register(env, PW_CLASS("PositionalIo"), METHODS, PW_COUNT(METHODS));
}

/* positional_io.c: positional scatter/gather reads and writes with full-transfer semantics, writes optionally
 * through Linux AIO (Java: PositionalIo, natives in PositionalIoBinding). */
#include "pagewise.h"

#include <limits.h>
#include <linux/aio_abi.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#ifndef SYS_preadv2 /* headers before Linux 4.6 */
#if defined(__x86_64__)
#define SYS_preadv2 327
#define SYS_pwritev2 328
#elif defined(__aarch64__)
#define SYS_preadv2 286
#define SYS_pwritev2 287
#endif
#endif
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

/* Writes through Linux AIO (PW_RW_AIO), each waited for by the thread that submitted it. ext4 runs an O_DIRECT
 * write that is not a pure overwrite (one into a hole of a sparse file) under the exclusive inode lock. A
 * synchronous write keeps that lock until the disk is done, so such writes from many threads reach the disk one
 * at a time; a submitted one keeps it only while it is submitted, and the thread waits outside it.
 * A write borrows one context (one write in flight) from a fixed pool for its duration: the lowest free slot, so
 * that only as many contexts exist as writes were ever in flight at once. A slot's context is made by its first
 * borrower and kept until the process ends. The pool needs no thread-local storage (pthread keys are glibc 2.34
 * symbols, and the library needs no glibc newer than 2.17). */
#define AIO_SLOTS 256

enum {
    AIO_SLOT_FREE,        /* no write in flight; context is 0 until the first borrower makes it */
    AIO_SLOT_BUSY,        /* borrowed by one thread, which alone reads and writes context */
    AIO_SLOT_UNUSABLE     /* io_setup failed for it, or its context was abandoned */
};

struct aio_slot {
    _Alignas(64) atomic_int state; /* a cache line each: borrowers of neighbouring slots do not contend */
    aio_context_t context;
};

static struct aio_slot aio_slots[AIO_SLOTS];

/* Borrows a slot with a context, or returns NULL (every slot busy or unusable, or io_setup failed now: no AIO in
 * the kernel, aio-max-nr reached); the caller then writes synchronously. */
static struct aio_slot *aio_borrow(void)
{
    for (int i = 0; i < AIO_SLOTS; i++) {
        struct aio_slot *slot = &aio_slots[i];
        int expected = AIO_SLOT_FREE;
        if (atomic_load_explicit(&slot->state, memory_order_relaxed) != AIO_SLOT_FREE
            || !atomic_compare_exchange_strong_explicit(&slot->state, &expected, AIO_SLOT_BUSY,
                                                        memory_order_acquire, memory_order_relaxed))
            continue;
        if (slot->context == 0) {
            aio_context_t context = 0;
            if (syscall(SYS_io_setup, 1, &context) != 0) {
                /* The next slot would fail alike: write synchronously now, and never ask for this slot again. */
                atomic_store_explicit(&slot->state, AIO_SLOT_UNUSABLE, memory_order_release);
                return NULL;
            }
            slot->context = context;
        }
        return slot;
    }
    return NULL;
}

static void aio_return(struct aio_slot *slot)
{
    atomic_store_explicit(&slot->state, AIO_SLOT_FREE, memory_order_release);
}

/* Returned by aio_write_once when io_submit did not take the write: nothing was written, write it synchronously. */
#define AIO_REFUSED (-2)

/* What the kernel was asked, counted here where the calls are made, with the flags as they reached it: tests read
 * these, so a flag lost on the way to the kernel shows (Java's own flags would not). Indexes of the jlong array
 * that preadv0 and pwritev0 fill in; keep in step with PositionalIo. */
enum {
    ASKED_AIO_WRITES,     /* syscalls submitted by io_submit */
    ASKED_DSYNC_CALLS,    /* syscalls carrying RWF_DSYNC */
    ASKED_DSYNC_BYTES,    /* bytes those moved */
    ASKED_DONTCACHE_CALLS,/* syscalls carrying RWF_DONTCACHE */
    ASKED_DONTCACHE_BYTES,
    ASKED_FIELDS
};

/* The slot's context could not be waited on (io_getevents failed: cannot happen with valid arguments). io_destroy
 * waits for the write still in flight, so the buffers are free again when the caller returns; the slot is not
 * borrowed again. */
static void aio_abandon(struct aio_slot *slot)
{
    syscall(SYS_io_destroy, slot->context);
    slot->context = 0;
    atomic_store_explicit(&slot->state, AIO_SLOT_UNUSABLE, memory_order_release);
}

/* One pwritev through the borrowed slot's context, waited for; the slot is given back (or abandoned) before it
 * returns. Returns what pwritev2 would (bytes, or -1 with errno), or AIO_REFUSED. The kernel copies the iocb and
 * the iovecs at io_submit; only the data buffers stay in use. */
static ssize_t aio_write_once(struct aio_slot *slot, int fd, const struct iovec *iov, int count, off_t offset,
                              int flags)
{
    struct iocb request;
    memset(&request, 0, sizeof request);
    request.aio_fildes = (uint32_t) fd;
    request.aio_lio_opcode = IOCB_CMD_PWRITEV;
    request.aio_buf = (uint64_t) (uintptr_t) iov;
    request.aio_nbytes = (uint64_t) count;
    request.aio_offset = (int64_t) offset;
    request.aio_rw_flags = flags;
    struct iocb *requests[1] = { &request };
    long submitted;
    PW_RETRY(submitted, syscall(SYS_io_submit, slot->context, 1L, requests));
    if (submitted != 1) {
        aio_return(slot);
        return AIO_REFUSED;
    }
    struct io_event event;
    long completed;
    /* EINTR leaves the write in flight and its completion in the ring: wait again. */
    PW_RETRY(completed, syscall(SYS_io_getevents, slot->context, 1L, 1L, &event, NULL));
    if (completed != 1) {
        aio_abandon(slot);
        errno = EIO; /* whether the write happened is unknown */
        return -1;
    }
    aio_return(slot);
    if (event.res < 0) {
        errno = (int) -event.res;
        return -1;
    }
    return (ssize_t) event.res;
}

/* preadv2 or pwritev2 (the call number) by its system call: glibc's wrappers are 2.26 symbols, and the library
 * needs no glibc newer than 2.17. The kernel takes the offset as a low and a high word (pos_from_hilo); on a 64-bit
 * architecture the low word holds all of it and the high one is ignored. A kernel without the call (before 4.6)
 * answers ENOSYS, made EOPNOTSUPP as glibc does: to callers, flags this kernel does not support. */
static ssize_t rw2(long call, int fd, const struct iovec *iov, int count, off_t offset, int flags)
{
    _Static_assert(sizeof(long) == 8, "the offset fits the low word on 64-bit architectures only");
    long n = syscall(call, (long) fd, iov, (long) count, (long) offset, 0L, (long) flags);
    if (n < 0 && errno == ENOSYS)
        errno = EOPNOTSUPP;
    return (ssize_t) n;
}

/* A durable write where the kernel has no RWF_DSYNC (before Linux 4.7, or qemu-user 7.2, which lacks pwritev2):
 * pwritev, then fdatasync, which makes that write durable as RWF_DSYNC would (and any other of the file's). With
 * RWF_DONTCACHE as well the EOPNOTSUPP stands: DONTCACHE's caller falls back to EVICT on it. */
static ssize_t write_then_sync(int fd, const struct iovec *iov, int count, off_t offset)
{
    ssize_t n = pwritev(fd, iov, count, offset);
    if (n <= 0)
        return n;
    int rc;
    PW_RETRY(rc, fdatasync(fd));
    return rc < 0 ? -1 : n;
}

/* One syscall over count (at most IOV_MAX) iovecs; plain preadv/pwritev when there are no flags (any kernel). With
 * PW_RW_AIO a write goes by io_submit where the kernel takes it. Counts what it asked in asked[]. */
static ssize_t transfer_once(int fd, const struct iovec *iov, int count, off_t offset, jint flags, int writing,
                             jlong *asked)
{
    int native_flags = rw_flags(flags);
    ssize_t n = AIO_REFUSED;
    if (writing && (flags & PW_RW_AIO)) {
        struct aio_slot *slot = aio_borrow();
        if (slot != NULL)
            n = aio_write_once(slot, fd, iov, count, offset, native_flags);
        if (n != AIO_REFUSED)
            asked[ASKED_AIO_WRITES]++;
    }
    if (n == AIO_REFUSED) {
        if (native_flags != 0)
            n = rw2(writing ? SYS_pwritev2 : SYS_preadv2, fd, iov, count, offset, native_flags);
        else if (count == 1) /* the kernel skips copying in a vector */
            n = writing ? pwrite(fd, iov->iov_base, iov->iov_len, offset) : pread(fd, iov->iov_base, iov->iov_len, offset);
        else
            n = writing ? pwritev(fd, iov, count, offset) : preadv(fd, iov, count, offset);
        if (n < 0 && errno == EOPNOTSUPP && writing && native_flags == RWF_DSYNC) {
            n = write_then_sync(fd, iov, count, offset);
            native_flags = 0; /* not counted: no RWF_DSYNC reached the kernel */
        }
    }
    if (n > 0 && (native_flags & RWF_DSYNC)) {
        asked[ASKED_DSYNC_CALLS]++;
        asked[ASKED_DSYNC_BYTES] += n;
    }
    if (n > 0 && (native_flags & RWF_DONTCACHE)) {
        asked[ASKED_DONTCACHE_CALLS]++;
        asked[ASKED_DONTCACHE_BYTES] += n;
    }
    return n;
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
static jlong transfer_all(int fd, struct iovec *iov, int count, jlong total, jlong offset, jint flags, int writing,
                          jlong *asked)
{
    int first = 0;
    jlong done = 0;
    while (done < total) {
        size_t wanted = 0;
        int batch = count - first < IOV_MAX ? count - first : IOV_MAX;
        for (int i = first; i < first + batch; i++)
            wanted += iov[i].iov_len;
        if (wanted > MAX_RW_COUNT)
            wanted = MAX_RW_COUNT;
        ssize_t n = transfer_once(fd, iov + first, batch, (off_t) (offset + done), flags, writing, asked);
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
        if (!writing && (flags & PW_RW_SHORT_IS_EOF) && (size_t) n < wanted)
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

/* The checks of a request that need no buffer: a valid offset and flags, and AIO for writes only. */
static int request_is_valid(jlong offset, jint flags, int writing)
{
    return offset >= 0 && (flags & ~PW_RW_ALL) == 0 && (writing || !(flags & PW_RW_AIO));
}

/* Transfers iov[0..count) of total bytes once they are described; total <= 0 (nothing, or describe's -errno) is
 * returned as it is. */
static jlong transfer_described(int fd, struct iovec *iov, int count, jlong total, jlong offset, jint flags,
                                int writing, jlong *asked)
{
    if (total <= 0)
        return total;
    if (offset > LLONG_MAX - total)
        return writing ? -EFBIG : -EOVERFLOW;
    return transfer_all(fd, iov, count, total, offset, flags, writing, asked);
}

/* The buffers are direct: the kernel copies to or from their memory while no JNI critical section is held, so the
 * blocking call does not stall the garbage collector. */
static jlong transfer(JNIEnv *env, jint fd, jobjectArray buffers, jintArray positions, jintArray lengths, jint count,
                      jlong offset, jint flags, int writing, jlong *asked)
{
    if (!request_is_valid(offset, flags, writing) || count < 0 || buffers == NULL || positions == NULL
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
    jlong result = transfer_described(fd, iov, count, total, offset, flags, writing, asked);
    if (iov != stack_iov)
        free(iov);
    return result;
}

/* transfer, then what it asked of the kernel into asked_out (when given: at least ASKED_FIELDS long). */
static jlong transfer_counted(JNIEnv *env, jint fd, jobjectArray buffers, jintArray positions, jintArray lengths,
                              jint count, jlong offset, jint flags, int writing, jlongArray asked_out)
{
    if (asked_out != NULL && (*env)->GetArrayLength(env, asked_out) < ASKED_FIELDS)
        return -EINVAL;
    jlong asked[ASKED_FIELDS] = { 0 };
    jlong result = transfer(env, fd, buffers, positions, lengths, count, offset, flags, writing, asked);
    if (asked_out != NULL)
        (*env)->SetLongArrayRegion(env, asked_out, 0, ASKED_FIELDS, asked);
    return result;
}

/* One buffer's range [position, position + length), the common case of a small read or write: no arrays to read,
 * two field reads (the buffer's address and capacity) instead of eleven calls back into the JVM. The buffer is direct:
 * PositionalIo checks that before the call. Returns as transfer_counted. */
static jlong transfer_one(JNIEnv *env, jint fd, jobject buffer, jint position, jint length, jlong offset, jint flags,
                          int writing, jlongArray asked_out)
{
    if (asked_out != NULL && (*env)->GetArrayLength(env, asked_out) < ASKED_FIELDS)
        return -EINVAL;
    if (!request_is_valid(offset, flags, writing))
        return -EINVAL;
    struct iovec iov;
    iov.iov_base = pw_known_direct_range(env, buffer, position, length);
    if (iov.iov_base == NULL)
        return -EFAULT;
    iov.iov_len = (size_t) length;
    jlong asked[ASKED_FIELDS] = { 0 };
    jlong result = transfer_described(fd, &iov, 1, length, offset, flags, writing, asked);
    if (asked_out != NULL)
        (*env)->SetLongArrayRegion(env, asked_out, 0, ASKED_FIELDS, asked);
    return result;
}

static jlong pread0(JNIEnv *env, jclass cls, jint fd, jobject buffer, jint position, jint length, jlong offset,
                    jint flags, jlongArray asked)
{
    (void) cls;
    return transfer_one(env, fd, buffer, position, length, offset, flags, 0, asked);
}

static jlong pwrite0(JNIEnv *env, jclass cls, jint fd, jobject buffer, jint position, jint length, jlong offset,
                     jint flags, jlongArray asked)
{
    (void) cls;
    return transfer_one(env, fd, buffer, position, length, offset, flags, 1, asked);
}

/* Reads into the buffers' ranges in order from offset. Returns the bytes read (fewer only at end of file, or at a
 * short read with PW_RW_SHORT_IS_EOF) or -errno. */
static jlong preadv0(JNIEnv *env, jclass cls, jint fd, jobjectArray buffers, jintArray positions, jintArray lengths,
                     jint count, jlong offset, jint flags, jlongArray asked)
{
    (void) cls;
    return transfer_counted(env, fd, buffers, positions, lengths, count, offset, flags, 0, asked);
}

/* Writes the buffers' ranges in order at offset. Returns the bytes written (all of them) or -errno. */
static jlong pwritev0(JNIEnv *env, jclass cls, jint fd, jobjectArray buffers, jintArray positions, jintArray lengths,
                      jint count, jlong offset, jint flags, jlongArray asked)
{
    (void) cls;
    return transfer_counted(env, fd, buffers, positions, lengths, count, offset, flags, 1, asked);
}

/* Name and JNI signature of each native method of PositionalIoBinding. */
static const JNINativeMethod METHODS[] = {
    { "preadv0", "(I[Ljava/nio/ByteBuffer;[I[IIJI[J)J", (void *) preadv0 },
    { "pwritev0", "(I[Ljava/nio/ByteBuffer;[I[IIJI[J)J", (void *) pwritev0 },
    { "pread0", "(ILjava/nio/ByteBuffer;IIJI[J)J", (void *) pread0 },
    { "pwrite0", "(ILjava/nio/ByteBuffer;IIJI[J)J", (void *) pwrite0 },
};

int pw_register_positional_io(JNIEnv *env)
{
    return pw_register(env, PW_CLASS("PositionalIoBinding"), METHODS, PW_COUNT(METHODS));
}

/* io_ring.c: an io_uring submission and completion ring by raw system calls, no liburing (Java: IoRing, natives in
 * IoRingBinding). One thread submits at a time and one thread reaps: IoRing's lock and its reaper keep it so. */
#include "pagewise.h"

#include <linux/io_uring.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef __NR_io_uring_setup
#define __NR_io_uring_setup 425
#endif
#ifndef __NR_io_uring_enter
#define __NR_io_uring_enter 426
#endif
#ifndef RWF_DSYNC
#define RWF_DSYNC 0x2
#endif
#define PW_RWF_DONTCACHE 0x80 /* Linux 6.14 */

/* Operations as IoRing numbers them. */
enum { PW_RING_NOP = 0, PW_RING_READ = 1, PW_RING_WRITE = 2, PW_RING_OPS = 3 };

struct pw_ring {
    int fd;
    unsigned sq_entries;
    _Atomic unsigned *sq_head;
    _Atomic unsigned *sq_tail;
    unsigned sq_mask;
    unsigned *sq_array;
    _Atomic unsigned *cq_head;
    _Atomic unsigned *cq_tail;
    unsigned cq_mask;
    struct io_uring_sqe *sqes;
    struct io_uring_cqe *cqes;
    void *sq_ring;
    size_t sq_ring_size;
    void *cq_ring; /* sq_ring itself where the kernel maps both at once */
    size_t cq_ring_size;
    size_t sqes_size;
};

static int
ring_setup(unsigned entries, struct io_uring_params *params)
{
    return (int) syscall(__NR_io_uring_setup, entries, params);
}

static int
ring_enter(int fd, unsigned to_submit, unsigned min_complete, unsigned flags)
{
    return (int) syscall(__NR_io_uring_enter, fd, to_submit, min_complete, flags, NULL, 0);
}

static void
ring_unmap(struct pw_ring *ring)
{
    if (ring->sqes != NULL && ring->sqes != MAP_FAILED) munmap(ring->sqes, ring->sqes_size);
    if (ring->cq_ring != NULL && ring->cq_ring != MAP_FAILED && ring->cq_ring != ring->sq_ring)
        munmap(ring->cq_ring, ring->cq_ring_size);
    if (ring->sq_ring != NULL && ring->sq_ring != MAP_FAILED) munmap(ring->sq_ring, ring->sq_ring_size);
}

/* A ring of at least entries submissions; its handle, or -errno. -ENOSYS where the kernel is older than 5.6 (no
 * IORING_OP_READ and WRITE, whose mark is IORING_FEAT_RW_CUR_POS), or where a seccomp profile refuses io_uring. */
static jlong
open0(JNIEnv *env, jclass cls, jint entries)
{
    (void) env; (void) cls;
    if (entries < 1 || entries > 4096) return -EINVAL;
    struct io_uring_params params;
    memset(&params, 0, sizeof params);
    int fd = ring_setup((unsigned) entries, &params);
    if (fd < 0) return -errno;
    if ((params.features & IORING_FEAT_RW_CUR_POS) == 0) {
        close(fd);
        return -ENOSYS;
    }
    struct pw_ring *ring = calloc(1, sizeof *ring);
    if (ring == NULL) {
        close(fd);
        return -ENOMEM;
    }
    ring->fd = fd;
    ring->sq_entries = params.sq_entries;
    ring->sq_ring_size = params.sq_off.array + params.sq_entries * sizeof(unsigned);
    ring->cq_ring_size = params.cq_off.cqes + params.cq_entries * sizeof(struct io_uring_cqe);
    int single = (params.features & IORING_FEAT_SINGLE_MMAP) != 0;
    if (single && ring->cq_ring_size > ring->sq_ring_size) ring->sq_ring_size = ring->cq_ring_size;
    ring->sq_ring = mmap(NULL, ring->sq_ring_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd,
                         IORING_OFF_SQ_RING);
    if (ring->sq_ring == MAP_FAILED) goto failed;
    ring->cq_ring = single ? ring->sq_ring
                           : mmap(NULL, ring->cq_ring_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd,
                                  IORING_OFF_CQ_RING);
    if (ring->cq_ring == MAP_FAILED) goto failed;
    ring->sqes_size = params.sq_entries * sizeof(struct io_uring_sqe);
    ring->sqes = mmap(NULL, ring->sqes_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, IORING_OFF_SQES);
    if (ring->sqes == MAP_FAILED) goto failed;
    char *sq = ring->sq_ring;
    char *cq = ring->cq_ring;
    ring->sq_head = (_Atomic unsigned *) (sq + params.sq_off.head);
    ring->sq_tail = (_Atomic unsigned *) (sq + params.sq_off.tail);
    ring->sq_mask = *(unsigned *) (sq + params.sq_off.ring_mask);
    ring->sq_array = (unsigned *) (sq + params.sq_off.array);
    ring->cq_head = (_Atomic unsigned *) (cq + params.cq_off.head);
    ring->cq_tail = (_Atomic unsigned *) (cq + params.cq_off.tail);
    ring->cq_mask = *(unsigned *) (cq + params.cq_off.ring_mask);
    ring->cqes = (struct io_uring_cqe *) (cq + params.cq_off.cqes);
    return (jlong) (intptr_t) ring;
failed:;
    int error = errno;
    ring_unmap(ring);
    close(fd);
    free(ring);
    return -error;
}

/* Queues count requests and submits them in one io_uring_enter; returns count, or -errno with none of them queued.
 * Each request: ops[i] (PW_RING_*), fds[i], buffers[i] from positions[i] for lengths[i] bytes (direct buffers, bounds
 * checked here), offsets[i], flags[i] (PW_RW_DONTCACHE, PW_RW_DSYNC) and tags[i], which its completion carries. */
static jint
submit0(JNIEnv *env, jclass cls, jlong handle, jint count, jintArray ops, jintArray fds, jobjectArray buffers,
        jintArray positions, jintArray lengths, jlongArray offsets, jintArray flags, jlongArray tags)
{
    (void) cls;
    struct pw_ring *ring = (struct pw_ring *) (intptr_t) handle;
    if (ring == NULL || count < 1) return -EINVAL;
    if ((*env)->GetArrayLength(env, ops) < count || (*env)->GetArrayLength(env, fds) < count
        || (*env)->GetArrayLength(env, buffers) < count || (*env)->GetArrayLength(env, positions) < count
        || (*env)->GetArrayLength(env, lengths) < count || (*env)->GetArrayLength(env, offsets) < count
        || (*env)->GetArrayLength(env, flags) < count || (*env)->GetArrayLength(env, tags) < count)
        return -EINVAL;
    unsigned head = atomic_load_explicit(ring->sq_head, memory_order_acquire);
    unsigned tail = atomic_load_explicit(ring->sq_tail, memory_order_relaxed);
    if ((unsigned) count > ring->sq_entries - (tail - head)) return -EBUSY;
    for (jint i = 0; i < count; i++) {
        jint op, fd, position, length, rw;
        jlong offset, tag;
        (*env)->GetIntArrayRegion(env, ops, i, 1, &op);
        (*env)->GetIntArrayRegion(env, fds, i, 1, &fd);
        (*env)->GetIntArrayRegion(env, positions, i, 1, &position);
        (*env)->GetIntArrayRegion(env, lengths, i, 1, &length);
        (*env)->GetIntArrayRegion(env, flags, i, 1, &rw);
        (*env)->GetLongArrayRegion(env, offsets, i, 1, &offset);
        (*env)->GetLongArrayRegion(env, tags, i, 1, &tag);
        if (op < 0 || op >= PW_RING_OPS || (rw & ~(PW_RW_DONTCACHE | PW_RW_DSYNC)) != 0) return -EINVAL;
        void *address = NULL;
        if (op != PW_RING_NOP) {
            if (offset < 0 || length < 0) return -EINVAL;
            jobject buffer = (*env)->GetObjectArrayElement(env, buffers, i);
            address = pw_direct_range(env, buffer, position, length);
            (*env)->DeleteLocalRef(env, buffer);
            if (address == NULL && length > 0) return -EFAULT;
        }
        struct io_uring_sqe *sqe = &ring->sqes[(tail + (unsigned) i) & ring->sq_mask];
        memset(sqe, 0, sizeof *sqe);
        sqe->opcode = op == PW_RING_READ ? IORING_OP_READ : op == PW_RING_WRITE ? IORING_OP_WRITE : IORING_OP_NOP;
        sqe->fd = op == PW_RING_NOP ? -1 : fd;
        sqe->off = (uint64_t) offset;
        sqe->addr = (uint64_t) (uintptr_t) address;
        sqe->len = (uint32_t) length;
        sqe->rw_flags = ((rw & PW_RW_DSYNC) ? RWF_DSYNC : 0) | ((rw & PW_RW_DONTCACHE) ? PW_RWF_DONTCACHE : 0);
        sqe->user_data = (uint64_t) tag;
        ring->sq_array[(tail + (unsigned) i) & ring->sq_mask] = (tail + (unsigned) i) & ring->sq_mask;
    }
    atomic_store_explicit(ring->sq_tail, tail + (unsigned) count, memory_order_release);
    for (int first = 1;; first = 0) {
        /* Everything queued, earlier leftovers too: the kernel takes them from the queue's head. */
        unsigned queued = tail + (unsigned) count - atomic_load_explicit(ring->sq_head, memory_order_acquire);
        if (queued == 0) return count;
        int taken;
        PW_RETRY(taken, ring_enter(ring->fd, queued, 0, 0));
        if (taken < 0 && first) {
            int error = errno;
            /* Nothing was taken, and without SQPOLL the kernel reads the queue only inside io_uring_enter. */
            if (atomic_load_explicit(ring->sq_head, memory_order_acquire) == head) {
                atomic_store_explicit(ring->sq_tail, tail, memory_order_release);
                return -error;
            }
        }
        /* Some were taken, or none now: the rest stay queued for the next submission's io_uring_enter. */
        if (taken <= 0) return count;
    }
}

/* Waits until at least min completions are there (0: does not wait), then takes up to the arrays' length of them:
 * tags[i] and results[i] (bytes, or -errno). Returns how many, or -errno. */
static jint
reap0(JNIEnv *env, jclass cls, jlong handle, jint min, jlongArray tags, jintArray results)
{
    (void) cls;
    struct pw_ring *ring = (struct pw_ring *) (intptr_t) handle;
    if (ring == NULL || min < 0) return -EINVAL;
    jint room = (*env)->GetArrayLength(env, tags);
    if ((*env)->GetArrayLength(env, results) < room || room < 1) return -EINVAL;
    unsigned head = atomic_load_explicit(ring->cq_head, memory_order_relaxed);
    while (atomic_load_explicit(ring->cq_tail, memory_order_acquire) - head < (unsigned) min) {
        int rc = ring_enter(ring->fd, 0, (unsigned) min, IORING_ENTER_GETEVENTS);
        if (rc < 0 && errno != EINTR) return -errno;
    }
    unsigned tail = atomic_load_explicit(ring->cq_tail, memory_order_acquire);
    jint taken = 0;
    while (head != tail && taken < room) {
        struct io_uring_cqe *cqe = &ring->cqes[head & ring->cq_mask];
        jlong tag = (jlong) cqe->user_data;
        jint result = cqe->res;
        (*env)->SetLongArrayRegion(env, tags, taken, 1, &tag);
        (*env)->SetIntArrayRegion(env, results, taken, 1, &result);
        head++;
        taken++;
    }
    atomic_store_explicit(ring->cq_head, head, memory_order_release);
    return taken;
}

static jint
close0(JNIEnv *env, jclass cls, jlong handle)
{
    (void) env; (void) cls;
    struct pw_ring *ring = (struct pw_ring *) (intptr_t) handle;
    if (ring == NULL) return -EINVAL;
    ring_unmap(ring);
    int rc = close(ring->fd);
    free(ring);
    return rc < 0 ? -errno : 0;
}

static const JNINativeMethod METHODS[] = {
    { "open0", "(I)J", (void *) open0 },
    { "submit0", "(JI[I[I[Ljava/nio/ByteBuffer;[I[I[J[I[J)I", (void *) submit0 },
    { "reap0", "(JI[J[I)I", (void *) reap0 },
    { "close0", "(J)I", (void *) close0 },
};

int pw_register_io_ring(JNIEnv *env)
{
    return pw_register(env, PW_CLASS("IoRingBinding"), METHODS, PW_COUNT(METHODS));
}

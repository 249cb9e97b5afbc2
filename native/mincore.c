/* mincore.c: page-cache residency of a file range (Java: Mincore, natives in MincoreBinding).
 * cachestat(2) counts the cached pages of a whole range in one call; mincore(2) tells which pages, for a range
 * mapped in bounded chunks so that a huge file never needs one huge mapping. */
#include "pagewise.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define CHUNK_BYTES (256L * 1024 * 1024)

/* Linux >= 6.5; glibc 2.36 and the 6.1 kernel headers here have neither the number nor the structs. */
#if !defined(__NR_cachestat) && (defined(__x86_64__) || defined(__aarch64__) || defined(__riscv))
#define __NR_cachestat 451
#endif

struct pw_cachestat_range {
    uint64_t off;
    uint64_t len;
};

struct pw_cachestat {
    uint64_t nr_cache;
    uint64_t nr_dirty;
    uint64_t nr_writeback;
    uint64_t nr_evicted;
    uint64_t nr_recently_evicted;
};

/* System calls made, for tests that check a cost does not grow with a file's size. */
static atomic_long mincore_calls;
static atomic_long cachestat_calls;

/* Asked every time: glibc answers from memory, and a shared cache would need synchronization. */
static long page_size(void)
{
    return sysconf(_SC_PAGESIZE);
}

/* A chunk is mapped PROT_NONE, so that nothing can touch (and fault in) the pages being counted; Linux answers
 * mincore for such a mapping. qemu-user (7.2) refuses it with ENOMEM, since it checks that the guest pages are
 * accessible: where that happens the chunk is mapped readable and asked again, and later chunks are mapped
 * readable first. */
static atomic_int prot_none_refused;

/* Maps [offset, offset + length) of fd with prot and asks mincore for it; returns 0 or -errno. */
static int ask(int fd, off_t offset, size_t length, int prot, unsigned char *vector)
{
    void *map = mmap(NULL, length, prot, MAP_SHARED, fd, offset);
    if (map == MAP_FAILED)
        return -errno;
    atomic_fetch_add(&mincore_calls, 1);
    int rc = mincore(map, length, vector);
    int saved = errno;
    munmap(map, length);
    return rc < 0 ? -saved : 0;
}

static int ask_chunk(int fd, off_t offset, size_t length, unsigned char *vector)
{
    if (atomic_load_explicit(&prot_none_refused, memory_order_relaxed))
        return ask(fd, offset, length, PROT_READ, vector);
    int rc = ask(fd, offset, length, PROT_NONE, vector);
    if (rc != -ENOMEM || ask(fd, offset, length, PROT_READ, vector) != 0)
        return rc; /* a real ENOMEM, or the readable mapping failed too: the first error is the one to report */
    atomic_store_explicit(&prot_none_refused, 1, memory_order_relaxed);
    return 0;
}

/* Calls visit for each chunk's residency vector; returns 0 or -errno. */
typedef void (*chunk_visitor)(void *state, const unsigned char *vector, size_t pages, size_t first_page);

static int scan(int fd, jlong offset, jlong length, chunk_visitor visit, void *state)
{
    long page = page_size();
    if (offset < 0 || length < 0 || offset % page != 0)
        return -EINVAL;
    unsigned char *vector = malloc((size_t) (CHUNK_BYTES / page));
    if (vector == NULL)
        return -ENOMEM;
    jlong done = 0;
    while (done < length) {
        jlong chunk = length - done < CHUNK_BYTES ? length - done : CHUNK_BYTES;
        int rc = ask_chunk(fd, (off_t) (offset + done), (size_t) chunk, vector);
        if (rc < 0) {
            free(vector);
            return rc;
        }
        size_t pages = (size_t) ((chunk + page - 1) / page);
        visit(state, vector, pages, (size_t) (done / page));
        done += chunk;
    }
    free(vector);
    return 0;
}

static void count_resident(void *state, const unsigned char *vector, size_t pages, size_t first_page)
{
    (void) first_page;
    jlong *count = state;
    for (size_t i = 0; i < pages; i++)
        *count += vector[i] & 1;
}

/* Counts resident pages of [offset, offset + length); offset must be page aligned. */
static jlong
residentPages0(JNIEnv *env, jclass cls, jint fd, jlong offset, jlong length)
{
    (void) env; (void) cls;
    jlong count = 0;
    int rc = scan(fd, offset, length, count_resident, &count);
    return rc < 0 ? rc : count;
}

struct bitmap_state {
    unsigned char *bits;
};

static void fill_bitmap(void *state, const unsigned char *vector, size_t pages, size_t first_page)
{
    struct bitmap_state *bitmap = state;
    for (size_t i = 0; i < pages; i++)
        if (vector[i] & 1)
            bitmap->bits[(first_page + i) / 8] |= (unsigned char) (1u << ((first_page + i) % 8));
}

/* Sets bit i of out (little-endian within each byte) when page i of the range is resident. */
static jint
residentBitmap0(JNIEnv *env, jclass cls, jint fd, jlong offset, jlong length, jbyteArray out)
{
    (void) cls;
    long page = page_size();
    if (out == NULL || length < 0)
        return -EINVAL;
    jlong pages = (length + page - 1) / page;
    jsize bytes = (*env)->GetArrayLength(env, out);
    if ((jlong) bytes * 8 < pages)
        return -EINVAL;
    struct bitmap_state state = { calloc((size_t) bytes > 0 ? (size_t) bytes : 1, 1) };
    if (state.bits == NULL)
        return -ENOMEM;
    int rc = scan(fd, offset, length, fill_bitmap, &state);
    if (rc == 0)
        (*env)->SetByteArrayRegion(env, out, 0, bytes, (const jbyte *) state.bits);
    free(state.bits);
    return rc;
}

/* One cachestat(2) of [offset, offset + length) into *stat (len 0: to the end of the file), counted; 0, -ENOSYS
 * where the kernel (or this architecture's build) has none, or -errno. */
static int
cachestat_range(jint fd, jlong offset, jlong length, struct pw_cachestat *stat)
{
#ifdef __NR_cachestat
    struct pw_cachestat_range range = { (uint64_t) offset, (uint64_t) length };
    long rc;
    atomic_fetch_add(&cachestat_calls, 1);
    PW_RETRY(rc, syscall(__NR_cachestat, fd, &range, stat, 0));
    return rc < 0 ? -errno : 0;
#else
    (void) fd; (void) offset; (void) length; (void) stat;
    return -ENOSYS;
#endif
}

/* Counts the cached pages of [offset, offset + length) with one cachestat(2); -ENOSYS where the kernel (or this
 * architecture's build) has none, -EPERM where a kernel refuses it for a file the caller cannot write. */
static jlong
cachedPages0(JNIEnv *env, jclass cls, jint fd, jlong offset, jlong length)
{
    (void) env; (void) cls;
    if (offset < 0 || length < 0)
        return -EINVAL;
    if (length == 0) /* cachestat reads len 0 as "to the end of the file" */
        return 0;
    struct pw_cachestat stat = { 0 };
    int rc = cachestat_range(fd, offset, length, &stat);
    return rc < 0 ? rc : (jlong) stat.nr_cache;
}

/* Fills out[0..5) with the page-cache state of [offset, offset + length) from one cachestat(2): cached, dirty, under
 * writeback, evicted, recently evicted pages; 0, or -ENOSYS where the kernel (or this build) has none, or -errno. */
static jint
cacheStat0(JNIEnv *env, jclass cls, jint fd, jlong offset, jlong length, jlongArray out)
{
    (void) cls;
    if (offset < 0 || length < 0 || out == NULL || (*env)->GetArrayLength(env, out) < 5)
        return -EINVAL;
    /* Here len 0 is wanted: "to the end of the file", however long it has grown. */
    struct pw_cachestat stat = { 0 };
    int rc = cachestat_range(fd, offset, length, &stat);
    if (rc < 0)
        return rc;
    jlong values[5] = { (jlong) stat.nr_cache, (jlong) stat.nr_dirty, (jlong) stat.nr_writeback,
                        (jlong) stat.nr_evicted, (jlong) stat.nr_recently_evicted };
    (*env)->SetLongArrayRegion(env, out, 0, 5, values);
    return 0;
}

/* out[0] = mincore calls, out[1] = cachestat calls made by this library since it loaded. */
static jint
syscallCounts0(JNIEnv *env, jclass cls, jlongArray out)
{
    (void) cls;
    if (out == NULL || (*env)->GetArrayLength(env, out) < 2)
        return -EINVAL;
    jlong counts[2] = { atomic_load(&mincore_calls), atomic_load(&cachestat_calls) };
    (*env)->SetLongArrayRegion(env, out, 0, 2, counts);
    return 0;
}

static jint
pageSize0(JNIEnv *env, jclass cls)
{
    (void) env; (void) cls;
    return (jint) page_size();
}

/* Name and JNI signature of each native method of Mincore. */
static const JNINativeMethod METHODS[] = {
    { "residentPages0", "(IJJ)J", (void *) residentPages0 },
    { "residentBitmap0", "(IJJ[B)I", (void *) residentBitmap0 },
    { "cachedPages0", "(IJJ)J", (void *) cachedPages0 },
    { "cacheStat0", "(IJJ[J)I", (void *) cacheStat0 },
    { "syscallCounts0", "([J)I", (void *) syscallCounts0 },
    { "pageSize0", "()I", (void *) pageSize0 },
};

int pw_register_mincore(JNIEnv *env)
{
    return pw_register(env, PW_CLASS("MincoreBinding"), METHODS, PW_COUNT(METHODS));
}

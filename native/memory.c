/* memory.c: I/O buffers in anonymous memory aligned to 2 MiB and advised for transparent huge pages (Java: Memory,
 * natives in MemoryBinding). */
#include "pagewise.h"

#include <stdint.h>
#include <sys/mman.h>

#define PW_HUGE_PAGE (2L << 20)

/* Maps size bytes (a multiple of 2 MiB) at a 2 MiB boundary, advised MADV_HUGEPAGE; the address, or -errno. */
static jlong
map0(JNIEnv *env, jclass cls, jlong size)
{
    (void) env; (void) cls;
    if (size <= 0 || size % PW_HUGE_PAGE != 0 || size > (jlong) 1 << 40)
        return -EINVAL;
    size_t span = (size_t) size + PW_HUGE_PAGE;
    char *mapped = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mapped == MAP_FAILED)
        return -errno;
    uintptr_t start = ((uintptr_t) mapped + PW_HUGE_PAGE - 1) & ~((uintptr_t) PW_HUGE_PAGE - 1);
    uintptr_t end = start + (uintptr_t) size;
    uintptr_t mapped_end = (uintptr_t) mapped + span;
    if (start > (uintptr_t) mapped)
        munmap(mapped, start - (uintptr_t) mapped);
    if (mapped_end > end)
        munmap((void *) end, mapped_end - end);
    /* EINVAL where the kernel has no transparent huge pages: the memory is then ordinary pages, still usable. */
    (void) madvise((void *) start, (size_t) size, MADV_HUGEPAGE);
    return (jlong) start;
}

static jint
unmap0(JNIEnv *env, jclass cls, jlong address, jlong size)
{
    (void) env; (void) cls;
    if (address <= 0 || address % PW_HUGE_PAGE != 0 || size <= 0 || size % PW_HUGE_PAGE != 0)
        return -EINVAL;
    return munmap((void *) (uintptr_t) address, (size_t) size) < 0 ? -errno : 0;
}

/* A direct ByteBuffer over [address, address + size): memory map0 returned, which the caller keeps mapped. */
static jobject
wrap0(JNIEnv *env, jclass cls, jlong address, jint size)
{
    (void) cls;
    if (address <= 0 || size <= 0)
        return NULL;
    return (*env)->NewDirectByteBuffer(env, (void *) (uintptr_t) address, (jlong) size);
}

/* Name and JNI signature of each native method of MemoryBinding. */
static const JNINativeMethod METHODS[] = {
    { "map0", "(J)J", (void *) map0 },
    { "unmap0", "(JJ)I", (void *) unmap0 },
    { "wrap0", "(JI)Ljava/nio/ByteBuffer;", (void *) wrap0 },
};

int pw_register_memory(JNIEnv *env)
{
    return pw_register(env, PW_CLASS("MemoryBinding"), METHODS, PW_COUNT(METHODS));
}

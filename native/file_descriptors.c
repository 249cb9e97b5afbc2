/* file_descriptors.c: opening, closing and describing files and block devices (Java: FileDescriptors, natives in
 * FileDescriptorsBinding). */
#include "pagewise.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <linux/stat.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <unistd.h>

/* fstat by its system call: glibc's fstat symbol is 2.33 (before it, an inline wrapper over __fxstat), and the
 * library needs no glibc newer than 2.17. On x86_64 and aarch64 glibc's struct stat is the kernel's. */
#if defined(__x86_64__)
_Static_assert(sizeof(struct stat) == 144, "glibc's struct stat is the x86_64 kernel's");
#elif defined(__aarch64__)
_Static_assert(sizeof(struct stat) == 128, "glibc's struct stat is the asm-generic kernel's");
#else
#error "check that this architecture's struct stat is the kernel's before building for it"
#endif

#ifndef STATX_DIOALIGN
#define STATX_DIOALIGN 0x00002000U
#endif

enum { PW_TYPE_REGULAR = 0, PW_TYPE_BLOCK = 1, PW_TYPE_OTHER = 2 };

static int open_flags(jint flags)
{
    int result = O_CLOEXEC | ((flags & PW_OPEN_READ_WRITE) ? O_RDWR : O_RDONLY);
    if (flags & PW_OPEN_CREATE)
        result |= O_CREAT;
    if (flags & PW_OPEN_EXCLUSIVE)
        result |= O_EXCL;
    if (flags & PW_OPEN_TRUNCATE)
        result |= O_TRUNC;
    if (flags & PW_OPEN_DIRECT)
        result |= O_DIRECT;
    if (flags & PW_OPEN_DSYNC)
        result |= O_DSYNC;
    return result;
}

/* Opens a NUL-terminated native path; returns the descriptor or -errno. */
static jint
open0(JNIEnv *env, jclass cls, jbyteArray path, jint flags, jint mode)
{
    (void) cls;
    if (path == NULL || (flags & ~PW_OPEN_ALL) != 0)
        return -EINVAL;
    jsize length = (*env)->GetArrayLength(env, path);
    if (length <= 0 || length > 65536)
        return -ENAMETOOLONG;
    char *copy = malloc((size_t) length + 1);
    if (copy == NULL)
        return -ENOMEM;
    (*env)->GetByteArrayRegion(env, path, 0, length, (jbyte *) copy);
    copy[length] = '\0';
    if (strlen(copy) != (size_t) length) {
        free(copy);
        return -EINVAL; /* embedded NUL */
    }
    int fd;
    PW_RETRY(fd, open(copy, open_flags(flags), (mode_t) mode));
    int saved = errno;
    free(copy);
    return fd < 0 ? -saved : fd;
}

/* Closes a descriptor. EINTR is not retried: on Linux the descriptor is gone either way. */
static jint
close0(JNIEnv *env, jclass cls, jint fd)
{
    (void) env; (void) cls;
    if (close(fd) < 0 && errno != EINTR)
        return -errno;
    return 0;
}

/* Fills out[0..5] with size, type (0 regular, 1 block device, 2 other), block size (the logical block size,
 * BLKSSZGET, of a block device; st_blksize otherwise), allocated bytes, and the major and minor number of the
 * device holding the data. */
static jint
stat0(JNIEnv *env, jclass cls, jint fd, jlongArray out)
{
    (void) cls;
    if (out == NULL || (*env)->GetArrayLength(env, out) < 6)
        return -EINVAL;
    struct stat st;
    int rc;
    PW_RETRY(rc, (int) syscall(SYS_fstat, fd, &st));
    if (rc < 0)
        return -errno;
    jlong values[6];
    values[0] = (jlong) st.st_size;
    values[1] = S_ISREG(st.st_mode) ? PW_TYPE_REGULAR : S_ISBLK(st.st_mode) ? PW_TYPE_BLOCK : PW_TYPE_OTHER;
    values[2] = (jlong) st.st_blksize;
    values[3] = (jlong) st.st_blocks * 512;
    dev_t device = S_ISBLK(st.st_mode) ? st.st_rdev : st.st_dev;
    values[4] = (jlong) major(device);
    values[5] = (jlong) minor(device);
    if (S_ISBLK(st.st_mode)) {
        uint64_t bytes = 0;
        int sector = 0;
        if (ioctl(fd, BLKGETSIZE64, &bytes) < 0)
            return -errno;
        if (ioctl(fd, BLKSSZGET, &sector) < 0)
            return -errno;
        values[0] = (jlong) bytes;
        values[2] = sector;
    }
    (*env)->SetLongArrayRegion(env, out, 0, 6, values);
    return 0;
}

static jint
ftruncate0(JNIEnv *env, jclass cls, jint fd, jlong length)
{
    (void) env; (void) cls;
    if (length < 0)
        return -EINVAL;
    int rc;
    PW_RETRY(rc, ftruncate(fd, (off_t) length));
    return rc < 0 ? -errno : 0;
}

/* 1 when fd is a terminal, else 0 (isatty sets errno to ENOTTY or EBADF, neither of which matters here). */
static jint
isTerminal0(JNIEnv *env, jclass cls, jint fd)
{
    (void) env; (void) cls;
    return isatty(fd) ? 1 : 0;
}

/* O_DIRECT alignment from statx(STATX_DIOALIGN) (Linux >= 6.1): out[0] = memory alignment, out[1] = offset and
 * length alignment; both 0 where the kernel or file system does not report it (Java then falls back). */
static jint
directAlignment0(JNIEnv *env, jclass cls, jint fd, jintArray out)
{
    (void) cls;
    if (out == NULL || (*env)->GetArrayLength(env, out) < 2)
        return -EINVAL;
    jint values[2] = { 0, 0 };
    struct statx stx;
    memset(&stx, 0, sizeof stx);
    long rc;
    PW_RETRY(rc, syscall(SYS_statx, fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &stx));
    if (rc == 0 && (stx.stx_mask & STATX_DIOALIGN) && stx.stx_dio_offset_align != 0) {
        values[0] = (jint) stx.stx_dio_mem_align;
        values[1] = (jint) stx.stx_dio_offset_align;
    }
    (*env)->SetIntArrayRegion(env, out, 0, 2, values);
    return 0;
}

/* The magic number of the file system holding fd (statfs f_type), or -errno. */
static jlong
fileSystemType0(JNIEnv *env, jclass cls, jint fd)
{
    (void) env; (void) cls;
    struct statfs st;
    int rc;
    PW_RETRY(rc, fstatfs(fd, &st));
    return rc < 0 ? -errno : (jlong) (unsigned long) st.f_type;
}

/* The open flags the kernel holds for fd (F_GETFL), as PW_OPEN_READ_WRITE, PW_OPEN_DIRECT and PW_OPEN_DSYNC bits, or
 * -errno: what the kernel was really asked at open, for tests. */
static jint
statusFlags0(JNIEnv *env, jclass cls, jint fd)
{
    (void) env; (void) cls;
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0)
        return -errno;
    jint result = 0;
    if ((flags & O_ACCMODE) == O_RDWR)
        result |= PW_OPEN_READ_WRITE;
    if (flags & O_DIRECT)
        result |= PW_OPEN_DIRECT;
    if ((flags & O_DSYNC) == O_DSYNC) /* O_SYNC includes the O_DSYNC bit */
        result |= PW_OPEN_DSYNC;
    return result;
}

/* Name and JNI signature of each native method of FileDescriptors. */
static const JNINativeMethod METHODS[] = {
    { "open0", "([BII)I", (void *) open0 },
    { "close0", "(I)I", (void *) close0 },
    { "stat0", "(I[J)I", (void *) stat0 },
    { "ftruncate0", "(IJ)I", (void *) ftruncate0 },
    { "isTerminal0", "(I)I", (void *) isTerminal0 },
    { "directAlignment0", "(I[I)I", (void *) directAlignment0 },
    { "fileSystemType0", "(I)J", (void *) fileSystemType0 },
    { "statusFlags0", "(I)I", (void *) statusFlags0 },
};

int pw_register_file_descriptors(JNIEnv *env)
{
    return pw_register(env, PW_CLASS("FileDescriptorsBinding"), METHODS, PW_COUNT(METHODS));
}

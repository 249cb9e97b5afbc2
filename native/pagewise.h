/* Shared helpers for the pagewise JNI layer.
 * Every wrapper returns a non-negative result or -errno; Java turns -errno into an exception. */
#ifndef PAGEWISE_H
#define PAGEWISE_H

#define _GNU_SOURCE
#include <errno.h>
#include <jni.h>
#include <stdint.h>

/* Retry a syscall expression while it fails with EINTR; yields its last result. */
#define PW_RETRY(result, expr) \
    do { (result) = (expr); } while ((result) == -1 && errno == EINTR)

/* Flags chosen by Java; mapped here so Java never depends on per-architecture O_* values. */
enum {
    PW_OPEN_READ_WRITE = 1,
    PW_OPEN_CREATE = 2,
    PW_OPEN_EXCLUSIVE = 4,
    PW_OPEN_TRUNCATE = 8,
    PW_OPEN_DIRECT = 16,
    PW_OPEN_DSYNC = 32,
    PW_OPEN_WRITE_ONLY = 64,
    PW_OPEN_ALL = 127
};

enum {
    PW_RW_DONTCACHE = 1,
    PW_RW_DSYNC = 2,
    PW_RW_SHORT_IS_EOF = 4,
    PW_RW_ALL = 7
};

enum {
    PW_FALLOC_PUNCH_HOLE = 1,
    PW_FALLOC_ZERO_RANGE = 2
};

/* Resolves the address of bytes [position, position + length) of a direct ByteBuffer,
 * or NULL when the buffer is not direct or the range is out of its bounds. */
void *pw_direct_range(JNIEnv *env, jobject buffer, jint position, jint length);

#endif

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
    PW_OPEN_ALL = 63
};

enum {
    PW_RW_DONTCACHE = 1,
    PW_RW_DSYNC = 2,
    PW_RW_SHORT_IS_EOF = 4,
    PW_RW_AIO = 8,
    PW_RW_ALL = 15
};

enum {
    PW_FALLOC_PUNCH_HOLE = 1,
    PW_FALLOC_ZERO_RANGE = 2,
    PW_FALLOC_ALLOCATE = 3
};

/* The natives are bound by RegisterNatives when the library loads (JNI_OnLoad in common.c), not by symbol name:
 * the C functions stay static, and a library that does not match its Java classes fails to load, naming the
 * method, instead of failing at the first call. PW_CLASS names the Java class that declares a topic's natives (its
 * binding). FindClass initializes the class, before its natives are bound: its static initializer must not call a
 * native. */
#define PW_CLASS(name) "io/pagewise/internal/" name
#define PW_COUNT(array) ((jint) (sizeof (array) / sizeof (array)[0]))

/* Binds count methods of the named class; 0, or -1 with the Java error (class or method not found) pending. */
int pw_register(JNIEnv *env, const char *class_name, const JNINativeMethod *methods, jint count);

/* One per topic file: binds the natives of that topic's Java class. */
int pw_register_advice(JNIEnv *env);
int pw_register_errno_texts(JNIEnv *env);
int pw_register_file_descriptors(JNIEnv *env);
int pw_register_io_ring(JNIEnv *env);
int pw_register_positional_io(JNIEnv *env);
int pw_register_mincore(JNIEnv *env);
int pw_register_memory(JNIEnv *env);
int pw_register_process_control(JNIEnv *env);
int pw_register_space(JNIEnv *env);

/* Resolves the address of bytes [position, position + length) of a direct ByteBuffer,
 * or NULL when the buffer is not direct or the range is out of its bounds. */
void *pw_direct_range(JNIEnv *env, jobject buffer, jint position, jint length);

/* pw_direct_range for a buffer the Java caller has checked is direct (isDirect()): the class is not checked again,
 * the bounds are. Such a buffer's address is never NULL unless it holds no memory. */
void *pw_known_direct_range(JNIEnv *env, jobject buffer, jint position, jint length);

#endif

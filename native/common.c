/* common.c: binding the natives at load time, and helpers shared by the topic files. */
#include "pagewise.h"

/* java.nio.Buffer's address and capacity: the fields GetDirectBufferAddress and GetDirectBufferCapacity read,
 * found once at load. */
static jfieldID buffer_address;
static jfieldID buffer_capacity;

/* base + position when [position, position + length) lies within a buffer of this capacity, else NULL. */
static void *within(JNIEnv *env, jobject buffer, char *base, jint position, jint length)
{
    if (base == NULL)
        return NULL;
    /* The capacity as GetDirectBufferCapacity has it, without that call's class check: the caller has made it. A
     * field read is the JVM's fast path, where the call was a transition into the VM and back. */
    jint capacity = (*env)->GetIntField(env, buffer, buffer_capacity);
    if (capacity < 0)
        return NULL;
    if ((jlong) position + (jlong) length > (jlong) capacity)
        return NULL;
    return base + position;
}

void *pw_direct_range(JNIEnv *env, jobject buffer, jint position, jint length)
{
    if (buffer == NULL || position < 0 || length < 0)
        return NULL;
    /* NULL unless buffer is a direct buffer (the JVM checks its class). */
    return within(env, buffer, (*env)->GetDirectBufferAddress(env, buffer), position, length);
}

void *pw_known_direct_range(JNIEnv *env, jobject buffer, jint position, jint length)
{
    if (buffer == NULL || position < 0 || length < 0)
        return NULL;
    /* The address field without GetDirectBufferAddress's class check (IsInstanceOf, a transition into the VM: 1.5 %
     * of a cached 4 KiB write). The caller has checked isDirect(); the bounds are still checked here. */
    jlong address = (*env)->GetLongField(env, buffer, buffer_address);
    /* A heap buffer's field holds an array offset, not an address; nothing can be mapped below Linux's default
     * mmap_min_addr (64 KiB), so the smallest of those are refused even if a caller forgot the check. */
    if (address < 65536)
        return NULL;
    return within(env, buffer, (char *) (intptr_t) address, position, length);
}

/* Finds what pw_direct_range needs; -1 with an exception pending when it cannot. */
static int pw_find_buffer_fields(JNIEnv *env)
{
    jclass cls = (*env)->FindClass(env, "java/nio/Buffer");
    if (cls == NULL)
        return -1;
    buffer_address = (*env)->GetFieldID(env, cls, "address", "J");
    buffer_capacity = buffer_address == NULL ? NULL : (*env)->GetFieldID(env, cls, "capacity", "I");
    (*env)->DeleteLocalRef(env, cls);
    return buffer_capacity == NULL ? -1 : 0;
}

int pw_register(JNIEnv *env, const char *class_name, const JNINativeMethod *methods, jint count)
{
    jclass cls = (*env)->FindClass(env, class_name);
    if (cls == NULL)
        return -1;
    jint rc = (*env)->RegisterNatives(env, cls, methods, count);
    (*env)->DeleteLocalRef(env, cls);
    return rc == JNI_OK ? 0 : -1;
}

/* Runs inside System.load: an error left pending here is what System.load throws. */
JNIEXPORT jint JNICALL
JNI_OnLoad(JavaVM *vm, void *reserved)
{
    (void) reserved;
    void *env = NULL;
    if ((*vm)->GetEnv(vm, &env, JNI_VERSION_1_8) != JNI_OK)
        return JNI_ERR;
    if (pw_find_buffer_fields(env) < 0 || pw_register_advice(env) < 0 || pw_register_errno_texts(env) < 0
        || pw_register_file_descriptors(env) < 0 || pw_register_io_ring(env) < 0
        || pw_register_positional_io(env) < 0 || pw_register_mincore(env) < 0 || pw_register_memory(env) < 0
        || pw_register_process_control(env) < 0 || pw_register_space(env) < 0)
        return JNI_ERR;
    return JNI_VERSION_1_8;
}

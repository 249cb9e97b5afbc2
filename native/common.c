/* common.c: binding the natives at load time, and helpers shared by the topic files. */
#include "pagewise.h"

/* java.nio.Buffer's capacity field: the field GetDirectBufferCapacity reads, found once at load. */
static jfieldID buffer_capacity;

void *pw_direct_range(JNIEnv *env, jobject buffer, jint position, jint length)
{
    if (buffer == NULL || position < 0 || length < 0)
        return NULL;
    /* NULL unless buffer is a direct buffer (the JVM checks its class). */
    char *base = (*env)->GetDirectBufferAddress(env, buffer);
    if (base == NULL)
        return NULL;
    /* The capacity as GetDirectBufferCapacity has it, without that call's second class check: the one above has
     * been made, and a direct buffer's capacity is this field. A field read is the JVM's fast path, where the
     * call was a transition into the VM and back (issue 24: the two checks were 3 % of a 4 KiB read). */
    jint capacity = (*env)->GetIntField(env, buffer, buffer_capacity);
    if (capacity < 0)
        return NULL;
    if ((jlong) position + (jlong) length > (jlong) capacity)
        return NULL;
    return base + position;
}

/* Finds what pw_direct_range needs; -1 with an exception pending when it cannot. */
static int pw_find_buffer_fields(JNIEnv *env)
{
    jclass cls = (*env)->FindClass(env, "java/nio/Buffer");
    if (cls == NULL)
        return -1;
    buffer_capacity = (*env)->GetFieldID(env, cls, "capacity", "I");
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
    if (pw_find_buffer_fields(env) < 0 || pw_register_advice(env) < 0 || pw_register_errors(env) < 0 || pw_register_fd(env) < 0
        || pw_register_io(env) < 0 || pw_register_mincore(env) < 0 || pw_register_process(env) < 0
        || pw_register_space(env) < 0)
        return JNI_ERR;
    return JNI_VERSION_1_8;
}

/* common.c: binding the natives at load time, and helpers shared by the topic files. */
#include "pagewise.h"

void *pw_direct_range(JNIEnv *env, jobject buffer, jint position, jint length)
{
    if (buffer == NULL || position < 0 || length < 0)
        return NULL;
    char *base = (*env)->GetDirectBufferAddress(env, buffer);
    jlong capacity = (*env)->GetDirectBufferCapacity(env, buffer);
    if (base == NULL || capacity < 0)
        return NULL;
    if ((jlong) position + (jlong) length > capacity)
        return NULL;
    return base + position;
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
    if (pw_register_advice(env) < 0 || pw_register_errors(env) < 0 || pw_register_fd(env) < 0
        || pw_register_io(env) < 0 || pw_register_mincore(env) < 0 || pw_register_process(env) < 0
        || pw_register_space(env) < 0)
        return JNI_ERR;
    return JNI_VERSION_1_8;
}

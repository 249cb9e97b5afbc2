/* common.c: helpers shared by the topic files. */
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

/* errors.c: errno names and descriptions, read once by Java at class init (Java: Errno). */
#include "pagewise.h"

#include <string.h>

JNIEXPORT jstring JNICALL
Java_io_pagewise_jni_Errno_name0(JNIEnv *env, jclass cls, jint number)
{
    (void) cls;
    const char *name = strerrorname_np(number);
    return name == NULL ? NULL : (*env)->NewStringUTF(env, name);
}

JNIEXPORT jstring JNICALL
Java_io_pagewise_jni_Errno_description0(JNIEnv *env, jclass cls, jint number)
{
    (void) cls;
    const char *text = strerrordesc_np(number);
    return text == NULL ? NULL : (*env)->NewStringUTF(env, text);
}

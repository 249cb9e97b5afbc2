/* errors.c: errno names and descriptions, read once by Java when the library loads (Java: Errno). */
#include "pagewise.h"

#include <string.h>

static jstring
name0(JNIEnv *env, jclass cls, jint number)
{
    (void) cls;
    const char *name = strerrorname_np(number);
    return name == NULL ? NULL : (*env)->NewStringUTF(env, name);
}

static jstring
description0(JNIEnv *env, jclass cls, jint number)
{
    (void) cls;
    const char *text = strerrordesc_np(number);
    return text == NULL ? NULL : (*env)->NewStringUTF(env, text);
}

/* Name and JNI signature of each native method of Errno. */
static const JNINativeMethod METHODS[] = {
    { "name0", "(I)Ljava/lang/String;", (void *) name0 },
    { "description0", "(I)Ljava/lang/String;", (void *) description0 },
};

int pw_register_errors(JNIEnv *env)
{
    return pw_register(env, PW_CLASS("Errno"), METHODS, PW_COUNT(METHODS));
}

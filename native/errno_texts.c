/* errno_texts.c: errno texts, read once by Java when the library loads (Java: ErrnoTexts, for Errno, which holds the
 * names). The texts are the C library's in the C locale (strerror_l, glibc 2.6), untranslated whatever the JVM's
 * locale, as strerrordesc_np's were; the library needs no glibc newer than 2.17. */
#include "pagewise.h"

#include <locale.h>
#include <string.h>

/* Java asks only for the numbers Linux names. NULL when no C locale can be made: Java then words the error itself. */
static jstring
description0(JNIEnv *env, jclass cls, jint number)
{
    (void) cls;
    locale_t c_locale = newlocale(LC_MESSAGES_MASK, "C", (locale_t) 0);
    if (c_locale == (locale_t) 0)
        return NULL;
    jstring text = (*env)->NewStringUTF(env, strerror_l(number, c_locale));
    freelocale(c_locale);
    return text;
}

/* Name and JNI signature of each native method of ErrnoTexts. */
static const JNINativeMethod METHODS[] = {
    { "description0", "(I)Ljava/lang/String;", (void *) description0 },
};

int pw_register_errno_texts(JNIEnv *env)
{
    return pw_register(env, PW_CLASS("ErrnoTexts"), METHODS, PW_COUNT(METHODS));
}

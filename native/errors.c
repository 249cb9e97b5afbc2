/* errors.c: errno names and descriptions, read once by Java when the library loads (Java: ErrnoNames, for Errno).
 * The names come from the table below, not strerrorname_np (glibc 2.32): the library needs no glibc newer than
 * 2.17. The texts are the C library's in the C locale (strerror_l, glibc 2.6), untranslated whatever the JVM's
 * locale, as strerrordesc_np's were. */
#include "pagewise.h"

#include <locale.h>
#include <string.h>

/* Every errno Linux defines, one name per number: EWOULDBLOCK, EDEADLOCK and ENOTSUP are aliases of EAGAIN, EDEADLK
 * and EOPNOTSUPP (the names glibc gives). The table becomes a switch, so a duplicate number does not compile. */
#define PW_ERRNO_NAMES(X) \
    X(EPERM) X(ENOENT) X(ESRCH) X(EINTR) X(EIO) X(ENXIO) X(E2BIG) X(ENOEXEC) X(EBADF) X(ECHILD) X(EAGAIN) \
    X(ENOMEM) X(EACCES) X(EFAULT) X(ENOTBLK) X(EBUSY) X(EEXIST) X(EXDEV) X(ENODEV) X(ENOTDIR) X(EISDIR) \
    X(EINVAL) X(ENFILE) X(EMFILE) X(ENOTTY) X(ETXTBSY) X(EFBIG) X(ENOSPC) X(ESPIPE) X(EROFS) X(EMLINK) X(EPIPE) \
    X(EDOM) X(ERANGE) X(EDEADLK) X(ENAMETOOLONG) X(ENOLCK) X(ENOSYS) X(ENOTEMPTY) X(ELOOP) X(ENOMSG) X(EIDRM) \
    X(ECHRNG) X(EL2NSYNC) X(EL3HLT) X(EL3RST) X(ELNRNG) X(EUNATCH) X(ENOCSI) X(EL2HLT) X(EBADE) X(EBADR) \
    X(EXFULL) X(ENOANO) X(EBADRQC) X(EBADSLT) X(EBFONT) X(ENOSTR) X(ENODATA) X(ETIME) X(ENOSR) X(ENONET) \
    X(ENOPKG) X(EREMOTE) X(ENOLINK) X(EADV) X(ESRMNT) X(ECOMM) X(EPROTO) X(EMULTIHOP) X(EDOTDOT) X(EBADMSG) \
    X(EOVERFLOW) X(ENOTUNIQ) X(EBADFD) X(EREMCHG) X(ELIBACC) X(ELIBBAD) X(ELIBSCN) X(ELIBMAX) X(ELIBEXEC) \
    X(EILSEQ) X(ERESTART) X(ESTRPIPE) X(EUSERS) X(ENOTSOCK) X(EDESTADDRREQ) X(EMSGSIZE) X(EPROTOTYPE) \
    X(ENOPROTOOPT) X(EPROTONOSUPPORT) X(ESOCKTNOSUPPORT) X(EOPNOTSUPP) X(EPFNOSUPPORT) X(EAFNOSUPPORT) \
    X(EADDRINUSE) X(EADDRNOTAVAIL) X(ENETDOWN) X(ENETUNREACH) X(ENETRESET) X(ECONNABORTED) X(ECONNRESET) \
    X(ENOBUFS) X(EISCONN) X(ENOTCONN) X(ESHUTDOWN) X(ETOOMANYREFS) X(ETIMEDOUT) X(ECONNREFUSED) X(EHOSTDOWN) \
    X(EHOSTUNREACH) X(EALREADY) X(EINPROGRESS) X(ESTALE) X(EUCLEAN) X(ENOTNAM) X(ENAVAIL) X(EISNAM) \
    X(EREMOTEIO) X(EDQUOT) X(ENOMEDIUM) X(EMEDIUMTYPE) X(ECANCELED) X(ENOKEY) X(EKEYEXPIRED) X(EKEYREVOKED) \
    X(EKEYREJECTED) X(EOWNERDEAD) X(ENOTRECOVERABLE) X(ERFKILL) X(EHWPOISON)

/* The symbolic name of number, or NULL where Linux defines none. */
static const char *errno_name(int number)
{
#define PW_ERRNO_CASE(name) case name: return #name;
    switch (number) {
        PW_ERRNO_NAMES(PW_ERRNO_CASE)
    default:
        return NULL;
    }
#undef PW_ERRNO_CASE
}

static jstring
name0(JNIEnv *env, jclass cls, jint number)
{
    (void) cls;
    const char *name = errno_name(number);
    return name == NULL ? NULL : (*env)->NewStringUTF(env, name);
}

/* NULL for a number without a name, as for strerrordesc_np: Java then says "Unknown error N" itself. */
static jstring
description0(JNIEnv *env, jclass cls, jint number)
{
    (void) cls;
    if (errno_name(number) == NULL)
        return NULL;
    locale_t c_locale = newlocale(LC_MESSAGES_MASK, "C", (locale_t) 0);
    if (c_locale == (locale_t) 0)
        return NULL;
    jstring text = (*env)->NewStringUTF(env, strerror_l(number, c_locale));
    freelocale(c_locale);
    return text;
}

/* Name and JNI signature of each native method of ErrnoNames. */
static const JNINativeMethod METHODS[] = {
    { "name0", "(I)Ljava/lang/String;", (void *) name0 },
    { "description0", "(I)Ljava/lang/String;", (void *) description0 },
};

int pw_register_errors(JNIEnv *env)
{
    return pw_register(env, PW_CLASS("ErrnoNames"), METHODS, PW_COUNT(METHODS));
}

/* Shows, without a JVM, the two system calls in which qemu-user differs from a kernel for pagewise
 * (docs/PLATFORMS.md): preadv2/pwritev2 with and without flags, and mincore on PROT_NONE and PROT_READ mappings.
 *
 *   aarch64-linux-gnu-gcc -static -o /tmp/probe-arm64 probe-qemu.c && /tmp/probe-arm64 /var/tmp/probe.dat
 *   gcc -o /tmp/probe probe-qemu.c && /tmp/probe /var/tmp/probe.dat
 *
 * Writes 1 MiB to FILE (created if missing). Raw system calls, so that glibc's own fallbacks do not hide the answer. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#ifndef RWF_DSYNC
#define RWF_DSYNC 0x2
#endif
#ifndef RWF_DONTCACHE
#define RWF_DONTCACHE 0x80
#endif

enum { SIZE = 1 << 20 };

static void report(const char *call, long result)
{
    if (result < 0)
        printf("%-36s = -1 %s\n", call, strerror(errno));
    else
        printf("%-36s = %ld\n", call, result);
}

static void vectored(int fd, int flags, const char *name)
{
    static char buffer[4096];
    struct iovec iov = { buffer, sizeof buffer };
    char call[64];
    snprintf(call, sizeof call, "pwritev2(%s)", name);
    report(call, syscall(SYS_pwritev2, fd, &iov, 1, 0L, 0L, flags));
    if (flags & RWF_DSYNC)
        return; /* a flag for writes only */
    snprintf(call, sizeof call, "preadv2(%s)", name);
    report(call, syscall(SYS_preadv2, fd, &iov, 1, 0L, 0L, flags));
}

static void residency(int fd, int prot, const char *name)
{
    static unsigned char vector[SIZE / 4096];
    char call[64];
    void *map = mmap(NULL, SIZE, prot, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED) {
        snprintf(call, sizeof call, "mmap(%s)", name);
        report(call, -1);
        return;
    }
    snprintf(call, sizeof call, "mincore on a %s mapping", name);
    report(call, mincore(map, SIZE, vector));
    munmap(map, SIZE);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s FILE\n", argv[0]);
        return 2;
    }
    int fd = open(argv[1], O_RDWR | O_CREAT, 0600);
    if (fd < 0 || ftruncate(fd, SIZE) != 0) {
        perror(argv[1]);
        return 1;
    }
    vectored(fd, 0, "0");
    vectored(fd, RWF_DSYNC, "RWF_DSYNC");
    vectored(fd, RWF_DONTCACHE, "RWF_DONTCACHE");
    residency(fd, PROT_NONE, "PROT_NONE");
    residency(fd, PROT_READ, "PROT_READ");
    close(fd);
    return 0;
}

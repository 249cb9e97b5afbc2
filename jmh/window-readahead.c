/* window-readahead.c: how a merge input's read window could be loaded, and what each way asks of the disk. The
 * program loads WINDOWS windows of 2 MiB of FILE one after another, each followed by 4 KiB preads of all of it, as a
 * merge reads its window, and prints the disk's read requests (its /sys/dev/block stat), the MiB they read, the
 * milliseconds, and the pages cached past the windows read (what readahead fetched beyond them). Ways:
 *   willneed      posix_fadvise(WILLNEED) of the window: the kernel reads it in single 4 KiB pages
 *   huge-random   mmap of the window, MADV_HUGEPAGE and MADV_RANDOM, MADV_POPULATE_READ, munmap: one 2 MiB folio,
 *                 marked for readahead, so the preads after it start the kernel's own readahead
 *   huge          the same without MADV_RANDOM: the fault reads the window and the next one
 * The file is opened with POSIX_FADV_RANDOM (as PagewiseDirectory's merge inputs are) and evicted before and after.
 * Usage: window-readahead FILE willneed|huge-random|huge WINDOWS. Run by jmh/window-readahead.sh. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22 /* Linux 5.14 */
#endif
#define WINDOW (2L << 20)
#define PAGE 4096L

static int
disk_reads(const struct stat *file, unsigned long *requests, unsigned long *sectors)
{
    char path[64];
    snprintf(path, sizeof path, "/sys/dev/block/%u:%u/stat", major(file->st_dev), minor(file->st_dev));
    FILE *stat = fopen(path, "r");
    if (stat == NULL) return -1;
    int fields = fscanf(stat, "%lu %*u %lu", requests, sectors);
    fclose(stat);
    return fields == 2 ? 0 : -1;
}

static long
cached_pages(int fd, long length)
{
    void *map = mmap(NULL, (size_t) length, PROT_READ, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED) return -1;
    long pages = (length + PAGE - 1) / PAGE, cached = 0;
    unsigned char *resident = malloc((size_t) pages);
    if (resident != NULL && mincore(map, (size_t) length, resident) == 0)
        for (long i = 0; i < pages; i++) cached += resident[i] & 1;
    else
        cached = -1;
    free(resident);
    munmap(map, (size_t) length);
    return cached;
}

static int
load_window(int fd, const char *way, off_t offset, long length)
{
    if (strcmp(way, "willneed") == 0) return posix_fadvise(fd, offset, length, POSIX_FADV_WILLNEED);
    void *map = mmap(NULL, (size_t) length, PROT_READ, MAP_SHARED, fd, offset);
    if (map == MAP_FAILED) return errno;
    int rc = madvise(map, (size_t) length, MADV_HUGEPAGE);
    if (rc == 0 && strcmp(way, "huge-random") == 0) rc = madvise(map, (size_t) length, MADV_RANDOM);
    if (rc == 0) rc = madvise(map, (size_t) length, MADV_POPULATE_READ);
    int error = rc == 0 ? 0 : errno;
    munmap(map, (size_t) length);
    return error;
}

int
main(int argc, char **argv)
{
    if (argc != 4 || (strcmp(argv[2], "willneed") != 0 && strcmp(argv[2], "huge-random") != 0
                      && strcmp(argv[2], "huge") != 0)) {
        fprintf(stderr, "usage: %s FILE willneed|huge-random|huge WINDOWS\n", argv[0]);
        return 2;
    }
    int fd = open(argv[1], O_RDONLY);
    struct stat file;
    if (fd < 0 || fstat(fd, &file) != 0) {
        perror(argv[1]);
        return 1;
    }
    long windows = atol(argv[3]);
    if (windows < 1 || windows * WINDOW > file.st_size) {
        fprintf(stderr, "%s: %ld windows of 2 MiB do not fit in its %lld bytes\n", argv[1], windows,
                (long long) file.st_size);
        return 2;
    }
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
    unsigned long requests0, sectors0, requests1, sectors1;
    if (disk_reads(&file, &requests0, &sectors0) != 0) {
        fprintf(stderr, "no block device statistics for %s\n", argv[1]);
        return 1;
    }
    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    char page[PAGE];
    for (long w = 0; w < windows; w++) {
        int rc = load_window(fd, argv[2], (off_t) (w * WINDOW), WINDOW);
        if (rc != 0) {
            fprintf(stderr, "%s of window %ld: %s\n", argv[2], w, strerror(rc));
            return 1;
        }
        for (long at = 0; at < WINDOW; at += PAGE) {
            if (pread(fd, page, PAGE, (off_t) (w * WINDOW + at)) != PAGE) {
                perror("pread");
                return 1;
            }
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &end);
    usleep(100000); /* lets readahead started by the last preads land before counting */
    disk_reads(&file, &requests1, &sectors1);
    long beyond = cached_pages(fd, (long) file.st_size) - windows * (WINDOW / PAGE);
    printf("%s requests=%lu mib=%lu ms=%.1f pages_beyond=%ld\n", argv[2], requests1 - requests0,
           (sectors1 - sectors0) / 2048, (double) (end.tv_sec - start.tv_sec) * 1e3
           + (double) (end.tv_nsec - start.tv_nsec) / 1e6, beyond);
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    close(fd);
    return 0;
}

/* direct-sparse-writes.c: why DIRECT writes go by io_submit. THREADS threads write a file of SIZE_MIB MiB in
 * 256 KiB O_DIRECT writes (each thread takes the next offset), the way the NBD server's threads write nbdcopy's
 * requests, and the program prints the seconds until all are written and fdatasync returns. The file must exist
 * with its size (sparse, by truncate, or allocated, by fallocate); how each write is made:
 *   pwrite      one synchronous pwrite
 *   fallocate   fallocate(FALLOC_FL_KEEP_SIZE) of the write's range, then pwrite
 *   aio         io_submit of one IOCB_CMD_PWRITE, then io_getevents for it (one AIO context per thread)
 * Usage: direct-sparse-writes FILE pwrite|fallocate|aio THREADS SIZE_MIB. Run by jmh/direct-sparse-writes.sh. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define WRITE_SIZE (256 * 1024)

enum method { PWRITE, FALLOCATE, AIO };

static int fd;
static enum method method;
static long long file_size;
static long long next_offset;
static pthread_mutex_t next_lock = PTHREAD_MUTEX_INITIALIZER;

static void die(const char *what)
{
    perror(what);
    exit(1);
}

static long long take_offset(void)
{
    pthread_mutex_lock(&next_lock);
    long long offset = next_offset;
    next_offset += WRITE_SIZE;
    pthread_mutex_unlock(&next_lock);
    return offset;
}

static void aio_write(aio_context_t context, void *buffer, long long offset)
{
    struct iocb request;
    memset(&request, 0, sizeof request);
    request.aio_fildes = (unsigned) fd;
    request.aio_lio_opcode = IOCB_CMD_PWRITE;
    request.aio_buf = (unsigned long) buffer;
    request.aio_nbytes = WRITE_SIZE;
    request.aio_offset = offset;
    struct iocb *requests[1] = { &request };
    if (syscall(SYS_io_submit, context, 1L, requests) != 1)
        die("io_submit");
    struct io_event event;
    if (syscall(SYS_io_getevents, context, 1L, 1L, &event, NULL) != 1)
        die("io_getevents");
    if (event.res != WRITE_SIZE)
        die("aio write");
}

static void *writer(void *unused)
{
    (void) unused;
    void *buffer;
    if (posix_memalign(&buffer, 4096, WRITE_SIZE) != 0)
        die("posix_memalign");
    memset(buffer, 0x5a, WRITE_SIZE);
    aio_context_t context = 0;
    if (method == AIO && syscall(SYS_io_setup, 1, &context) != 0)
        die("io_setup");
    for (long long offset = take_offset(); offset < file_size; offset = take_offset()) {
        if (method == FALLOCATE && fallocate(fd, FALLOC_FL_KEEP_SIZE, offset, WRITE_SIZE) != 0)
            die("fallocate");
        if (method == AIO)
            aio_write(context, buffer, offset);
        else if (pwrite(fd, buffer, WRITE_SIZE, offset) != WRITE_SIZE)
            die("pwrite");
    }
    if (method == AIO)
        syscall(SYS_io_destroy, context);
    free(buffer);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: %s FILE pwrite|fallocate|aio THREADS SIZE_MIB\n", argv[0]);
        return 2;
    }
    method = strcmp(argv[2], "aio") == 0 ? AIO : strcmp(argv[2], "fallocate") == 0 ? FALLOCATE : PWRITE;
    int threads = atoi(argv[3]);
    file_size = atoll(argv[4]) << 20;
    if (threads < 1 || threads > 256 || file_size <= 0) {
        fprintf(stderr, "THREADS must be 1..256 and SIZE_MIB positive\n");
        return 2;
    }
    fd = open(argv[1], O_WRONLY | O_DIRECT);
    if (fd < 0)
        die("open O_DIRECT");
    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    pthread_t thread[256];
    for (int i = 0; i < threads; i++)
        if (pthread_create(&thread[i], NULL, writer, NULL) != 0)
            die("pthread_create");
    for (int i = 0; i < threads; i++)
        pthread_join(thread[i], NULL);
    if (fdatasync(fd) != 0)
        die("fdatasync");
    clock_gettime(CLOCK_MONOTONIC, &end);
    printf("%.3f\n", (double) (end.tv_sec - start.tv_sec) + (double) (end.tv_nsec - start.tv_nsec) / 1e9);
    return 0;
}

/* Where a process on a loaded host loses time: a store to a page of a
 * MAP_SHARED file (as the library's state files are written on the launch
 * path) and a 1 ms sleep, every millisecond for a while, with the calling
 * thread's run-queue wait (schedstat) and the host's steal and I/O pressure
 * around each sleep. Prints each event over the thresholds, then a summary.
 * A store that blocks in the kernel (write-back, a journal) shows as a slow
 * store; a scheduler delay as a sleep whose overshoot is run-queue wait;
 * a paused virtual CPU as steal. Not built with a GPU; no library loaded.
 * Usage: bench_host_stall DIR SECONDS [PAGES] (DIR: where the state files
 * live, e.g. a build's state/ on the disk, against /dev/shm; PAGES, 1 by
 * default: the stores go round that many pages of the file, so that more of
 * them land on a page the kernel has written back since, which must fault
 * again (page_mkwrite: the file system's journal, the dirty-page
 * throttle) before the store completes). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "runq.h" /* the tests' schedstat reader */

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* A small /proc file's first line into b (empty when unreadable). */
static void read_first(const char *path, char *b, size_t n)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t k = fd >= 0 ? read(fd, b, n - 1) : -1;
    if (fd >= 0) close(fd);
    b[k > 0 ? k : 0] = 0;
}

static uint64_t steal_ticks(void)
{
    char b[256];
    unsigned long long v[8];
    read_first("/proc/stat", b, sizeof b);
    return sscanf(b, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
                  &v[6], &v[7]) == 8 ? v[7] : 0;
}

/* Microseconds some task waited on I/O, since boot (PSI; 0 without it). */
static uint64_t io_some_us(void)
{
    char b[256];
    read_first("/proc/pressure/io", b, sizeof b);
    const char *t = strstr(b, "total=");
    return t ? strtoull(t + 6, NULL, 10) : 0;
}

int main(int argc, char **argv)
{
    long pages = argc == 4 ? atol(argv[3]) : 1;
    if ((argc != 3 && argc != 4) || pages < 1 || pages > 262144) {
        fprintf(stderr, "usage: %s DIR SECONDS [PAGES (1..262144)]\n", argv[0]);
        return 2;
    }
    size_t size = (size_t)pages * 4096;
    char path[4096];
    snprintf(path, sizeof path, "%s/host_stall.page", argv[1]);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0 || ftruncate(fd, (off_t)size) != 0) {
        perror(path);
        return 1;
    }
    uint64_t *page = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (page == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    uint64_t end = now_ns() + strtoull(argv[2], NULL, 10) * 1000000000ull;
    uint64_t n = 0, store_max = 0, store_over1 = 0, sleep_over100 = 0, sleep_max = 0, runq_in_over = 0,
             over_total = 0;
    const struct timespec ms = {0, 1000000};
    int rq = runq_open();
    while (now_ns() < end) {
        uint64_t a = now_ns();
        __atomic_add_fetch(&page[(n % (uint64_t)pages) * 512], 1, __ATOMIC_RELAXED); /* the store a launch makes */
        uint64_t st = now_ns() - a;
        uint64_t q0 = runq_fd_ns(rq), s0 = steal_ticks(), i0 = io_some_us(), b = now_ns();
        nanosleep(&ms, NULL);
        uint64_t sl = now_ns() - b, q = runq_fd_ns(rq) - q0, s = steal_ticks() - s0, io = io_some_us() - i0;
        n++;
        if (st > store_max) store_max = st;
        store_over1 += st > 1000000;
        if (sl > sleep_max) sleep_max = sl;
        if (st > 50000000 || sl > 100000000) {
            if (sl > 100000000) sleep_over100++, over_total += sl - 1000000, runq_in_over += q;
            time_t w = time(NULL);
            struct tm tm;
            gmtime_r(&w, &tm);
            printf("%02d:%02d:%02d store %.1f ms, 1 ms sleep took %.1f ms (runnable without a core %.1f ms), "
                   "steal +%llu ticks, I/O pressure +%.1f ms\n",
                   tm.tm_hour, tm.tm_min, tm.tm_sec, st / 1e6, sl / 1e6, q / 1e6, (unsigned long long)s, io / 1e3);
            fflush(stdout);
        }
    }
    unlink(path);
    printf("%llu stores to %ld page(s) of %s: longest %.3f ms, %llu over 1 ms; sleeps over 100 ms: %llu (longest %.1f ms), "
           "their overshoot %.1f s, of which runnable without a core %.1f s\n",
           (unsigned long long)n, pages, path, store_max / 1e6, (unsigned long long)store_over1,
           (unsigned long long)sleep_over100, sleep_max / 1e6, over_total / 1e9, runq_in_over / 1e9);
    return 0;
}

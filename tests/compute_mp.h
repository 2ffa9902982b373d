/* Helpers for the compute cap's multi-process tests: shared anonymous
 * memory, a start barrier (without one, short-lived children never overlap
 * and a race test passes for the wrong reason), clocks. */
#ifndef CC_COMPUTE_MP_H
#define CC_COMPUTE_MP_H

#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cudacap/abi_compute_region.h"

static inline void *mp_shared(size_t n)
{
    void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) abort();
    return p;
}

static inline uint64_t mp_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline void mp_sleep_until(uint64_t t)
{
    struct timespec ts = {(time_t)(t / 1000000000ull), (long)(t % 1000000000ull)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0) {}
}

static inline void mp_msleep(unsigned ms) { usleep(ms * 1000u); }

/* All n arrive, then all go. */
static inline void mp_barrier(uint32_t *ctr, uint32_t n)
{
    __atomic_add_fetch(ctr, 1, __ATOMIC_ACQ_REL);
    while (__atomic_load_n(ctr, __ATOMIC_ACQUIRE) < n) sched_yield();
}

/* Waits for every child; returns the number that failed. */
static inline int mp_wait_all(const pid_t *pids, int n)
{
    int bad = 0;
    for (int i = 0; i < n; i++) {
        int st = 0;
        if (waitpid(pids[i], &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) bad++;
    }
    return bad;
}

/* The container's compute region, read-only (what `cudacap status` sees),
 * or NULL while it is not there at its full size: a region the library has
 * created but not yet extended, mapped whole, killed the reader with
 * SIGBUS (compute.elastic.bursts.h200's poll, beside two suites,
 * 2026-12-03). The library only grows the file, so a full-size file stays
 * mappable. */
static inline const cc_compute_region_t *mp_map_compute_region(const char *dir)
{
    char p[1024];
    snprintf(p, sizeof p, "%s/%s", dir, CC_COMPUTE_FILE);
    int fd = open(p, O_RDONLY);
    if (fd < 0) return NULL;
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_size < (off_t)CC_COMPUTE_FILE_SIZE) {
        close(fd);
        return NULL;
    }
    void *m = mmap(NULL, CC_COMPUTE_FILE_SIZE, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    return m == MAP_FAILED ? NULL : m;
}

#endif

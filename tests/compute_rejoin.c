/* The compute rejoin: 3 processes capped at 30 % start while the
 * container's compute.region is unusable (MODE fifo: a FIFO in its place;
 * dir: a directory), so each caps itself on a bucket of its own and the
 * three together take ~90 % of the device. The test removes the obstacle
 * once all three are launching and 1 s has passed; each watcher retries the
 * region once a second and, once it opens, registers its process and moves
 * the device to the shared line. Asserted:
 *  - structure (the primary check, not timing-sensitive): within 8 s the
 *    region is valid, has exactly one device line, and all three pids are in
 *    its process table; at the end each worker's log has said it joined
 *    ("device 0 on line 0");
 *  - the cap: the three together, over 4 s from 0.5 s after the join, do at
 *    most 30 + 5 % of the device (each worker counts the device time of the
 *    batches it completed). Generous against the ~90 % without the rejoin.
 * Control (compute.rejoin.*.control, WILL_FAIL): the library built with
 * CC_TEST_NO_COMPUTE_REJOIN never retries; nothing creates the region again
 * after the obstacle goes, so the structural check fails every time (and the
 * container stays at ~90 %, measured the same way after the 8 s wait).
 * Usage: compute_rejoin fifo|dir (CUDACAP_STATE_DIR: the container's folder). */
#include <cuda.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "compute_mp.h"
#include "spin_setup.h"

#define NW 3
#define CAP 30
#define JOIN_WAIT_NS 8000000000ull  /* the join: ~1 s normally; 8 on a loaded machine */
#define SETTLE_NS 500000000ull
#define MEASURE_NS 4000000000ull

/* Shared between the parent and the workers (a file in the folder). */
struct board {
    uint64_t ready[NW];   /* first batch done */
    uint64_t work_ns[NW]; /* device time of the batches completed */
    uint64_t stop;
};

static struct board *map_board(const char *path, int create)
{
    int fd = open(path, O_RDWR | (create ? O_CREAT | O_TRUNC : 0), 0600);
    if (fd < 0 || (create && ftruncate(fd, sizeof(struct board)) != 0)) {
        if (fd >= 0) close(fd);
        return NULL;
    }
    void *m = mmap(NULL, sizeof(struct board), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    return m == MAP_FAILED ? NULL : m;
}

/* --worker I BOARD: full-device 1.5 ms kernels, 4 per sync, until stopped. */
static int worker(int i, const char *bpath)
{
    struct board *b = map_board(bpath, 0);
    if (!b) return 2;
    CUfunction fn;
    CUstream s;
    int sms;
    if (spin_setup("spin_1500us", &fn, &s, &sms) != 0) return 1;
    uint64_t deadline = mp_now() + 60000000000ull; /* the parent died: stop anyway */
    while (!__atomic_load_n(&b->stop, __ATOMIC_ACQUIRE) && mp_now() < deadline) {
        for (int k = 0; k < 4; k++)
            CHECK_CU(cuLaunchKernel(fn, (unsigned)sms, 1, 1, 32, 1, 1, 0, s, NULL, NULL));
        CHECK_CU(cuStreamSynchronize(s));
        if (check_failures) return 1;
        __atomic_fetch_add(&b->work_ns[i], 4 * 1500000ull, __ATOMIC_RELAXED);
        __atomic_store_n(&b->ready[i], 1, __ATOMIC_RELEASE);
    }
    return 0;
}

static uint64_t total_work(const struct board *b)
{
    uint64_t w = 0;
    for (int i = 0; i < NW; i++) w += __atomic_load_n(&b->work_ns[i], __ATOMIC_RELAXED);
    return w;
}

/* The region as an observer sees it: a valid header, its line count, and
 * how many of pids are in the process table; -1 while not there (missing,
 * not a regular file yet, not sized, not built). Never blocks on a FIFO. */
static int joined(const char *dir, const pid_t *pids, int *lines)
{
    char p[1024];
    snprintf(p, sizeof p, "%s/%s", dir, CC_COMPUTE_FILE);
    int fd = open(p, O_RDONLY | O_NONBLOCK | O_NOFOLLOW);
    if (fd < 0) return -1;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size != CC_COMPUTE_FILE_SIZE) {
        close(fd);
        return -1;
    }
    const cc_compute_region_t *r = mmap(NULL, CC_COMPUTE_FILE_SIZE, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (r == MAP_FAILED) return -1;
    int n = -1;
    if (__atomic_load_n(&r->hdr.magic, __ATOMIC_ACQUIRE) == CC_COMPUTE_MAGIC &&
        r->hdr.layout_version == CC_COMPUTE_LAYOUT) {
        n = 0;
        *lines = 0;
        for (unsigned i = 0; i < CC_COMPUTE_DEVICES; i++)
            *lines += __atomic_load_n(&r->uuid[i].state, __ATOMIC_ACQUIRE) == 2;
        for (int w = 0; w < NW; w++)
            for (unsigned i = 0; i < CC_COMPUTE_PROCS; i++)
                if (__atomic_load_n(&r->proc[i].pid, __ATOMIC_ACQUIRE) == (uint32_t)pids[w]) {
                    n++;
                    break;
                }
    }
    munmap((void *)r, CC_COMPUTE_FILE_SIZE);
    return n;
}

static int log_says_joined(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    char line[1024];
    int yes = 0;
    while (!yes && fgets(line, sizeof line, f))
        yes = strstr(line, "joined the container's shared region; device 0 on line 0") != NULL;
    fclose(f);
    return yes;
}

int main(int argc, char **argv)
{
    if (argc == 4 && !strcmp(argv[1], "--worker")) return worker(atoi(argv[2]), argv[3]);
    const char *dir = getenv("CUDACAP_STATE_DIR");
    if (!dir) return 77;
    int fifo = argc == 2 && !strcmp(argv[1], "fifo");
    if (argc != 2 || (!fifo && strcmp(argv[1], "dir"))) {
        fprintf(stderr, "usage: %s fifo|dir\n", argv[0]);
        return 2;
    }
    char reg[1024], bpath[1024], logs[NW][1100];
    mkdir(dir, 0700);
    snprintf(reg, sizeof reg, "%s/%s", dir, CC_COMPUTE_FILE);
    snprintf(bpath, sizeof bpath, "%s/rejoin.board", dir);
    unlink(reg); /* a previous run's, whichever it was */
    rmdir(reg);
    CHECK(fifo ? mkfifo(reg, 0600) == 0 : mkdir(reg, 0700) == 0, "cannot make the %s at %s",
          argv[1], reg);
    struct board *b = map_board(bpath, 1);
    CHECK(b != NULL, "cannot map %s", bpath);
    if (check_failures) CHECK_EXIT();
    pid_t pids[NW];
    for (int i = 0; i < NW; i++) {
        snprintf(logs[i], sizeof logs[i], "%s/worker.%d.log", dir, i);
        pids[i] = fork();
        if (pids[i] == 0) {
            int fd = open(logs[i], O_WRONLY | O_CREAT | O_TRUNC, 0600);
            if (fd >= 0) dup2(fd, 2);
            char is[8];
            snprintf(is, sizeof is, "%d", i);
            setenv("CUDACAP_LOG_LEVEL", "2", 1); /* info: the join is said there */
            execl("/proc/self/exe", argv[0], "--worker", is, bpath, (char *)NULL);
            _exit(127);
        }
        CHECK(pids[i] > 0, "fork failed");
    }
    /* All three launching (on their own buckets), then 1 s of that. */
    uint64_t t0 = mp_now();
    int ready = 0;
    while (ready < NW && mp_now() < t0 + 30000000000ull) {
        mp_msleep(20);
        ready = 0;
        for (int i = 0; i < NW; i++) ready += (int)__atomic_load_n(&b->ready[i], __ATOMIC_ACQUIRE);
    }
    CHECK(ready == NW, "only %d of %d workers launching after 30 s", ready, NW);
    uint64_t w0 = total_work(b), a = mp_now();
    mp_msleep(1000);
    double before = (double)(total_work(b) - w0) / (double)(mp_now() - a) * 100;
    printf("%s in place of %s: the %d processes together at %.1f%% of the device\n", argv[1],
           CC_COMPUTE_FILE, NW, before);
    int gone = fifo ? unlink(reg) : rmdir(reg);
    CHECK(gone == 0, "cannot remove the %s: %s", argv[1], strerror(errno));
    uint64_t t_rm = mp_now(), t_j = 0;
    int n = -1, lines = 0;
    while (!check_failures && mp_now() < t_rm + JOIN_WAIT_NS) {
        n = joined(dir, pids, &lines);
        if (n == NW) {
            t_j = mp_now();
            break;
        }
        mp_msleep(50);
    }
    if (t_j) {
        printf("all %d in the region's process table %.2f s after the removal (%d line%s)\n", NW,
               (double)(t_j - t_rm) / 1e9, lines, lines == 1 ? "" : "s");
        CHECK(lines == 1, "%d device lines in the region, 1 expected", lines);
    } else {
        CHECK(0, "%d of %d processes in the region's process table %.0f s after the removal "
                 "(-1: no valid region)", n, NW, JOIN_WAIT_NS / 1e9);
        t_j = mp_now(); /* measured all the same: what the container takes meanwhile */
    }
    mp_sleep_until(t_j + SETTLE_NS);
    uint64_t w1 = total_work(b), m0 = mp_now();
    mp_sleep_until(m0 + MEASURE_NS);
    double after = (double)(total_work(b) - w1) / (double)(mp_now() - m0) * 100;
    printf("from %.1f s after the join (or the wait): %.1f%% of the device over %.0f s (cap %d%%)\n",
           SETTLE_NS / 1e9, after, MEASURE_NS / 1e9, CAP);
    CHECK(after <= CAP + 5, "the container at %.1f%% after the join, cap %d%%", after, CAP);
    CHECK(after >= 5, "the container at %.1f%% after the join: launches stalled", after);
    __atomic_store_n(&b->stop, 1, __ATOMIC_RELEASE);
    CHECK(mp_wait_all(pids, NW) == 0, "a worker failed (logs: %s/worker.*.log)", dir);
    for (int i = 0; i < NW; i++)
        CHECK(log_says_joined(logs[i]), "worker %d never said it joined (%s)", i, logs[i]);
    CHECK_EXIT();
}

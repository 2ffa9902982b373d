/* Shared state file: creation, locking, process slots, memory accounting. */
#include "sim_shared.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "os/os.h"

static struct sim_shared *g_shm;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static int g_slot = -1;
static pid_t g_slot_pid;

uint64_t sim_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t sim_realtime_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000ull + (uint64_t)ts.tv_nsec / 1000u;
}

void sim_clock_pair(uint64_t *mono_ns, uint64_t *real_us)
{
    /* Read between two monotonic reads, the closest pair of a few tries: a
     * caller preempted between a plain monotonic and a plain realtime read
     * converted NVML's periods with an offset off by the preemption, and
     * two reads of one period's device-wide value differed (beside a suite
     * loop, 2026-12-05). */
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 4; i++) {
        uint64_t a = sim_now_ns(), r = sim_realtime_us(), b = sim_now_ns();
        if (b - a < best) best = b - a, *mono_ns = a + (b - a) / 2, *real_us = r;
        if (best < 20000) break;
    }
}

/* The H200 shows a period's utilization some time after the period ends
 * (docs/validation.md, 2026-12-04: a queue started at t read 0 % in the
 * samples published up to t + 0.2-0.5 s); CUDACAP_SIM_NVML_LAG_MS models it. */
uint64_t sim_nvml_newest_end(uint64_t now_us, uint64_t P)
{
    uint64_t lag = sim_config()->nvml_lag_us;
    uint64_t at = now_us > lag ? now_us - lag : 0;
    return at / P * P;
}

void sim_sleep_until(uint64_t mono_ns)
{
    struct timespec ts = { (time_t)(mono_ns / 1000000000ull), (long)(mono_ns % 1000000000ull) };
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
    }
}

static void map_state(void)
{
    const struct sim_config *c = sim_config();
    char dir[512], path[600];
    const char *d = getenv("CUDACAP_SIM_DIR");
    if (d && *d)
        snprintf(dir, sizeof dir, "%s", d);
    else
        snprintf(dir, sizeof dir, "/tmp/cudacap-sim-%u", (unsigned)getuid());
    if (mkdir(dir, 0700) != 0 && errno != EEXIST)
        return;
    snprintf(path, sizeof path, "%s/state", dir);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0)
        return;
    struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
    while (fcntl(fd, F_SETLKW, &fl) != 0 && errno == EINTR) {
    }
    struct stat st;
    size_t sz = sizeof(struct sim_shared);
    if (fstat(fd, &st) != 0 || ((size_t)st.st_size < sz && ftruncate(fd, (off_t)sz) != 0)) {
        close(fd);
        return;
    }
    struct sim_shared *s = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (s == MAP_FAILED) {
        close(fd);
        return;
    }
    if (__atomic_load_n(&s->magic, __ATOMIC_ACQUIRE) != SIM_MAGIC || s->layout != SIM_LAYOUT) {
        memset(s, 0, sz);
        pthread_mutexattr_t a;
        pthread_mutexattr_init(&a);
        pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
        pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
        pthread_mutex_init(&s->lock, &a);
        pthread_mutexattr_destroy(&a);
        s->layout = SIM_LAYOUT;
        s->ndev = c->ndev;
        for (uint32_t i = 0; i < SIM_MAX_DEV; i++) {
            s->dev[i].total = c->mem;
            s->dev[i].sms = c->sms;
        }
        __atomic_store_n(&s->magic, SIM_MAGIC, __ATOMIC_RELEASE);
    } else {
        /* A state file left by earlier runs: adopt this process's device
         * configuration when no live process uses the simulator. */
        sim_lock(s);
        sim_sweep_locked(s);
        int live = 0;
        for (int i = 0; i < SIM_MAX_PROC; i++)
            live |= (int)s->procs[i].in_use;
        if (!live) {
            s->ndev = c->ndev;
            for (uint32_t i = 0; i < SIM_MAX_DEV; i++) {
                s->dev[i].total = c->mem;
                s->dev[i].sms = c->sms;
            }
        }
        sim_unlock(s);
    }
    fl.l_type = F_UNLCK;
    fcntl(fd, F_SETLK, &fl);
    close(fd);
    g_shm = s;
}

struct sim_shared *sim_shm(void)
{
    pthread_once(&g_once, map_state);
    return g_shm;
}

uint32_t sim_ndev(void)
{
    struct sim_shared *s = sim_shm();
    return s ? s->ndev : 0;
}

/* Nanoseconds this process waited over 1 ms for the lock: a holder the
 * machine stopped running (other suites on the cores, a page fault on the
 * state file). Timing tests read it (cuSimTestLockStallNs) to tell a cap's
 * effect from a starved machine's. */
static uint64_t g_lock_stall_ns;

uint64_t cuSimTestLockStallNs(void)
{
    return __atomic_load_n(&g_lock_stall_ns, __ATOMIC_RELAXED);
}

/* Timed, in a loop: a robust futex can lose its wake-up when a holder is
 * SIGKILLed between storing 0 and FUTEX_WAKE, or a woken waiter is killed
 * before it takes the lock; the word is then free (or owner-died) and a plain
 * lock sleeps forever (seen once in ~100 mem.preload.kill_storm runs). Each
 * timeout retries the word, so such a loss costs at most 20 ms. */
void sim_lock(struct sim_shared *s)
{
    int r = pthread_mutex_trylock(&s->lock); /* the common case: free */
    if (r == EOWNERDEAD) pthread_mutex_consistent(&s->lock);
    if (r == 0 || r == EOWNERDEAD) return;
    uint64_t t0 = sim_now_ns();
    for (;;) {
        struct timespec t;
        clock_gettime(CLOCK_REALTIME, &t);
        t.tv_nsec += 20 * 1000 * 1000;
        if (t.tv_nsec >= 1000000000L) t.tv_sec++, t.tv_nsec -= 1000000000L;
        r = pthread_mutex_timedlock(&s->lock, &t);
        if (r == EOWNERDEAD) pthread_mutex_consistent(&s->lock);
        if (r != ETIMEDOUT) break;
    }
    uint64_t waited = sim_now_ns() - t0;
    if (waited > 1000000ull) __atomic_add_fetch(&g_lock_stall_ns, waited, __ATOMIC_RELAXED);
}

void sim_unlock(struct sim_shared *s)
{
    pthread_mutex_unlock(&s->lock);
}

/* Start time (field 22) of /proc/<pid>/stat; 0 if unreadable, UINT64_MAX
 * for a zombie (it holds no GPU memory any more). The library's reader
 * (src/os/os.h), so both see a process the same way. */
static uint64_t start_time_of(pid_t pid)
{
    char state;
    uint64_t t;
    if (cc_os_proc_stat(pid, &state, &t) != 0)
        return 0;
    return state == 'Z' || state == 'X' ? UINT64_MAX : t;
}

/* The first NSpid field whatever the levels (our pid in the outermost
 * namespace we can see); our own pid without one. */
static uint32_t host_pid(void)
{
    uint32_t first;
    return cc_os_nspid(&first, 1) >= 1 && first ? first : (uint32_t)getpid();
}

/* Our pid namespace: two processes are one only with the same pid in the
 * same namespace (a sidecar's pid 1 is not ours). */
static uint32_t my_pidns(void)
{
    static pid_t for_pid; /* read again in a fork child: it may be in a new namespace */
    static uint32_t ns;
    pid_t me = getpid();
    if (for_pid != me) {
        uint64_t id = 0;
        ns = cc_os_pidns(&id) == 0 ? (uint32_t)id : 0;
        for_pid = me;
    }
    return ns;
}

static int is_me(const struct sim_proc *p)
{
    return p->in_use && p->pid == (uint32_t)getpid() && p->pidns == my_pidns();
}

static int proc_alive(const struct sim_proc *p)
{
    /* Another namespace's pid means nothing here: alive until it releases
     * its slot (a killed one's memory stays, as a leak would). */
    if (p->pidns != my_pidns())
        return 1;
    if (!cc_os_pid_alive((pid_t)p->pid))
        return 0;
    uint64_t st = start_time_of((pid_t)p->pid);
    return st != UINT64_MAX && (st == 0 || st == p->start_time);
}

void sim_sweep_locked(struct sim_shared *s)
{
    pid_t me = getpid();
    for (int i = 0; i < SIM_MAX_PROC; i++) {
        struct sim_proc *p = &s->procs[i];
        if (p->in_use && !((pid_t)p->pid == me && p->pidns == my_pidns()) && !proc_alive(p))
            memset(p, 0, sizeof *p);
    }
}

int sim_my_slot_locked(struct sim_shared *s)
{
    pid_t me = getpid();
    if (g_slot >= 0 && g_slot_pid == me && is_me(&s->procs[g_slot]))
        return g_slot;
    int free_i = -1;
    for (int pass = 0; pass < 2 && free_i < 0; pass++) {
        if (pass)
            sim_sweep_locked(s);
        for (int i = 0; i < SIM_MAX_PROC; i++) {
            if (is_me(&s->procs[i])) {
                free_i = i;
                break;
            }
            if (!s->procs[i].in_use && free_i < 0)
                free_i = i;
        }
    }
    if (free_i < 0)
        return -1;
    /* A slot already carrying our pid is from before an exec(): its
     * memory went with the old image. */
    struct sim_proc *p = &s->procs[free_i];
    memset(p, 0, sizeof *p);
    p->pid = (uint32_t)me;
    p->pidns = my_pidns();
    p->nvml_pid = (uint32_t)((int64_t)host_pid() + sim_config()->pid_offset);
    p->start_time = start_time_of(me);
    p->in_use = 1;
    g_slot = free_i;
    g_slot_pid = me;
    return free_i;
}

void sim_release_my_slot(void)
{
    struct sim_shared *s = g_shm;
    if (!s || g_slot < 0 || g_slot_pid != getpid())
        return;
    sim_lock(s);
    if (is_me(&s->procs[g_slot]))
        memset(&s->procs[g_slot], 0, sizeof s->procs[g_slot]);
    sim_unlock(s);
    g_slot = -1;
}

uint64_t sim_used_locked(struct sim_shared *s, uint32_t dev)
{
    uint64_t u = 0;
    for (int i = 0; i < SIM_MAX_PROC; i++)
        if (s->procs[i].in_use)
            u += s->procs[i].mem[dev];
    return u;
}

int sim_charge(uint32_t dev, uint64_t bytes)
{
    struct sim_shared *s = sim_shm();
    if (!s || dev >= s->ndev)
        return -1;
    sim_lock(s);
    int slot = sim_my_slot_locked(s);
    int ok = 0;
    if (slot >= 0) {
        uint64_t used = sim_used_locked(s, dev);
        if (used + bytes > s->dev[dev].total || used + bytes < used) {
            sim_sweep_locked(s);
            used = sim_used_locked(s, dev);
        }
        if (used + bytes <= s->dev[dev].total && used + bytes >= used) {
            s->procs[slot].mem[dev] += bytes;
            if (used + bytes > s->dev[dev].peak_used) s->dev[dev].peak_used = used + bytes;
            ok = 1;
        }
    }
    sim_unlock(s);
    return ok ? 0 : -1;
}

void sim_uncharge(uint32_t dev, uint64_t bytes)
{
    struct sim_shared *s = sim_shm();
    if (!s || dev >= SIM_MAX_DEV || bytes == 0)
        return;
    sim_lock(s);
    int slot = sim_my_slot_locked(s);
    if (slot >= 0) {
        uint64_t *m = &s->procs[slot].mem[dev];
        *m = *m >= bytes ? *m - bytes : 0;
    }
    sim_unlock(s);
}

void sim_ctx_count(uint32_t dev, int delta)
{
    struct sim_shared *s = sim_shm();
    if (!s || dev >= SIM_MAX_DEV)
        return;
    sim_lock(s);
    int slot = sim_my_slot_locked(s);
    if (slot >= 0) {
        uint32_t *c = &s->procs[slot].ctx[dev];
        if (delta < 0 && *c < (uint32_t)-delta)
            *c = 0;
        else
            *c = (uint32_t)((int64_t)*c + delta);
    }
    sim_unlock(s);
}

void sim_mem_info(uint32_t dev, uint64_t *free_b, uint64_t *total_b)
{
    struct sim_shared *s = sim_shm();
    *free_b = *total_b = 0;
    if (!s || dev >= s->ndev)
        return;
    sim_lock(s);
    sim_sweep_locked(s);
    uint64_t used = sim_used_locked(s, dev);
    *total_b = s->dev[dev].total;
    *free_b = used >= *total_b ? 0 : *total_b - used;
    sim_unlock(s);
}

/* For tests (exported as the driver API is, sim/cuda.map; as cuSimTestLockStallNs): the most memory
 * device dev ever had in use at once, every process of the simulator
 * counted. A transient the caps must never allow shows here even when it
 * lasted one call. 0, or -1 for a bad device. */
int cuSimTestPeakMem(int dev, unsigned long long *bytes)
{
    struct sim_shared *s = sim_shm();
    if (!s || !bytes || dev < 0 || (uint32_t)dev >= s->ndev)
        return -1;
    sim_lock(s);
    *bytes = s->dev[dev].peak_used;
    sim_unlock(s);
    return 0;
}

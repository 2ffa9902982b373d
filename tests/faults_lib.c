/* Fault campaign, library side (issue 10): capped clients of the simulator
 * (this program re-executed as "worker", libcudacap.so preloaded) allocate,
 * free and launch while every state file the library keeps in the folder
 * (memory.region, compute.region, sampling.lock, identity.lock) is spoiled:
 * random bytes, truncation, a FIFO, a directory, a hard link to a file
 * outside, a symbolic link to a file outside, each before the processes
 * start and while they run; and forged counters, owners, stamps and
 * generations written into the live regions. Every case runs 3 workers, then
 * stops the corruption (removes what replaced the file; spoiled content
 * stays for the library to repair), adds a late joiner, and asserts:
 *  - no crash: every worker exits 0, none dies of a signal;
 *  - no hang: every step of a worker is acknowledged within a bound (else
 *    it is killed and the case fails), launches flow again afterwards;
 *  - the cap: the simulator's NVML memory of the container's processes,
 *    sampled throughout by a thread of this process, never passes the cap +
 *    one context. Where docs/memory.md states an exposure (spoiled content of
 *    memory.region while processes run; a forged lower count; a swapped file
 *    before start, while each process caps itself), the bound in the window
 *    is per process (each one <= cap + its context) until the recovery below
 *    has passed, and container-wide again from then on;
 *  - nothing lost: after the corruption stops, the processes together can
 *    again fill the container to within one small chunk of the cap (and not
 *    past it), within a bounded time (FAULTS_RECOVER_S);
 *  - nothing outside the folder touched: a canary file beside the folder,
 *    the hard link's and the symbolic link's targets keep content, size and
 *    mtime, and nothing new appears beside them.
 * Short mode (CI): one round, each (file, kind, timing) and each forgery
 * once. Long mode: FAULTS_LONG=N (or argument --long N) runs N rounds with
 * new random seeds. FAULTS_SEED fixes the first seed (printed on failure).
 * Usage: faults_lib BASE_DIR [--long N] [--only TEXT[|TEXT...]]
 * Environment: FAULTS_PRELOAD (what the workers get as LD_PRELOAD),
 * CUDACAP_SIM_DIR, CUDACAP_SIM_CTX_MEM (must be 16m). With
 * CUDACAP_SIM_DEVICES=N > 1 the workers allocate on, and launch on a stream
 * of, the last device (every device capped alike) while their launching
 * thread keeps device 0's context current; the witness reads that device. */
#include <cuda.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "cudacap/abi_compute_region.h"
#include "cudacap/abi_mem_region.h"
#include "cudacap/nvml_api.h"
#include "mp_util.h"
#include "ptx.h"

#define MIB (1ull << 20)
#define KIB (1ull << 10)
#define CAP (256 * MIB)
#define CTX (16 * MIB)
#define BIG (4 * MIB)     /* fill: first in chunks of this */
#define SMALL (256 * KIB) /* then of this: "nothing lost" is to within one */
#define NW 3              /* workers of a case */
#define MAXW (NW + 1)     /* and the late joiner */
#define MAXHELD 256

enum { OP_CHURN = 1, OP_FREE, OP_FILL, OP_IDLE, OP_EXIT };

struct wslot {
    int pid;
    int ready;     /* 1: context up, module loaded */
    int cmd;       /* seq << 4 | op, from the parent */
    int ack;       /* seq done */
    uint64_t beats;
    uint64_t launches;
    uint64_t held;  /* bytes it holds (its own count) */
    uint64_t alloc_ok, alloc_refused;
    int err;        /* nonzero: a CUDA call failed unexpectedly */
};
struct shm {
    struct wslot w[MAXW];
};
static struct shm *S;

/* ---- worker ------------------------------------------------------------- */

/* g_ctx: the last device's context, where the workers allocate and launch
 * (device 0 on one simulated device); g_ctx0: device 0's, current in the
 * launching thread when there are several, so that every launch goes
 * through the stream's-device route (docs/interception.md, "Which device"). */
static CUcontext g_ctx, g_ctx0;
static CUfunction g_fn;
static int g_me;

static void *launcher(void *arg)
{
    (void)arg;
    cuCtxSetCurrent(g_ctx);
    CUstream st;
    if (cuStreamCreate(&st, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS) return NULL;
    cuCtxSetCurrent(g_ctx0);
    for (unsigned i = 0;; i++) {
        void *args[] = {NULL};
        if (cuLaunchKernel(g_fn, 1, 1, 1, 32, 1, 1, 0, st, args, NULL) != CUDA_SUCCESS)
            __atomic_store_n(&S->w[g_me].err, 2, __ATOMIC_RELAXED);
        if (i % 4 == 3) cuStreamSynchronize(st);
        __atomic_add_fetch(&S->w[g_me].launches, 1, __ATOMIC_RELEASE);
        usleep(2000);
    }
    return NULL;
}

/* A full container refuses a new context (context admission): the late
 * joiner waits for the churners to drop some, at most 5 s. */
static CUresult retain(int ordinal, CUcontext *ctx)
{
    CUdevice dev;
    CUresult rr = cuDeviceGet(&dev, ordinal);
    for (int t = 0; rr == CUDA_SUCCESS && t < 2500; t++) {
        CUresult e = cuDevicePrimaryCtxRetain(ctx, dev);
        if (e != CUDA_ERROR_OUT_OF_MEMORY) return e;
        if (t == 2499) rr = e;
        usleep(2000);
    }
    return rr;
}

static int worker(int id)
{
    g_me = id;
    struct wslot *w = &S->w[id];
    CUmodule mod;
    int ndev = 0;
    CUresult rr = cuInit(0);
    if (!rr) rr = cuDeviceGetCount(&ndev);
    if (!rr && ndev < 1) rr = CUDA_ERROR_NO_DEVICE;
    if (!rr) rr = retain(0, &g_ctx0);
    if (!rr) rr = ndev > 1 ? retain(ndev - 1, &g_ctx) : (g_ctx = g_ctx0, CUDA_SUCCESS);
    if (rr || cuCtxSetCurrent(g_ctx) || cuModuleLoadData(&mod, test_ptx) ||
        cuModuleGetFunction(&g_fn, mod, "spin_50us")) {
        fprintf(stderr, "worker %d: CUDA setup failed (%d)\n", id, (int)rr);
        return 3;
    }
    size_t fr, tot;
    cuMemGetInfo(&fr, &tot); /* binds the device: the context is counted */
    pthread_t th;
    if (pthread_create(&th, NULL, launcher, NULL) != 0) return 3;
    CUdeviceptr ptr[MAXHELD];
    uint64_t sz[MAXHELD];
    int n = 0, last = 0;
    uint64_t seed = 0x9e3779b97f4a7c15ull ^ ((uint64_t)getpid() << 20);
    __atomic_store_n(&w->pid, getpid(), __ATOMIC_RELAXED);
    __atomic_store_n(&w->ready, 1, __ATOMIC_RELEASE);
#define HOLD(p, s) (ptr[n] = (p), sz[n++] = (s), w->held += (s))
#define DROP(k)                                                                       \
    do {                                                                              \
        w->held -= sz[k]; /* before the free: the witness never undercounts */        \
        if (cuMemFree(ptr[k]) != CUDA_SUCCESS) __atomic_store_n(&w->err, 1, __ATOMIC_RELAXED); \
        ptr[k] = ptr[n - 1], sz[k] = sz[n - 1], n--;                                  \
    } while (0)
    for (;;) {
        int c = __atomic_load_n(&w->cmd, __ATOMIC_ACQUIRE), op = c & 15, seq = c >> 4;
        __atomic_add_fetch(&w->beats, 1, __ATOMIC_RELAXED);
        if (op == OP_CHURN) {
            uint64_t r = rnd(&seed);
            if (n < MAXHELD && (n == 0 || (r & 3) != 0)) {
                uint64_t s = (1 + (r >> 8) % 8) * MIB;
                CUdeviceptr p;
                CUresult e = cuMemAlloc(&p, s);
                if (e == CUDA_SUCCESS) HOLD(p, s), w->alloc_ok++;
                else if (e == CUDA_ERROR_OUT_OF_MEMORY) {
                    w->alloc_refused++;
                    if (n) DROP((int)((r >> 32) % (unsigned)n));
                } else __atomic_store_n(&w->err, 1, __ATOMIC_RELAXED);
            } else if (n) DROP((int)((r >> 32) % (unsigned)n));
            if ((r & 63) == 0) cuMemGetInfo(&fr, &tot);
            usleep(200); /* a core is not ours: suites run beside timing tests */
            continue;
        }
        if (seq != last) {
            if (op == OP_FREE || op == OP_EXIT)
                while (n) DROP(n - 1);
            if (op == OP_FILL) {
                uint64_t chunk[2] = {BIG, SMALL};
                for (int k = 0; k < 2; k++)
                    for (;;) {
                        CUdeviceptr p;
                        if (n >= MAXHELD || cuMemAlloc(&p, chunk[k]) != CUDA_SUCCESS) break;
                        HOLD(p, chunk[k]);
                    }
            }
            if (op == OP_EXIT) {
                __atomic_store_n(&w->ack, seq, __ATOMIC_RELEASE);
                _exit(0); /* the launcher may sit in a launch: no join */
            }
            last = seq;
            __atomic_store_n(&w->ack, seq, __ATOMIC_RELEASE);
        }
        usleep(300);
    }
}

/* ---- parent: files ---------------------------------------------------------- */

static char g_base[700], g_state[800], g_good[800], g_out[800], g_self[1024];
static const char *FILES[] = {CC_MEM_REGION_FILE, CC_COMPUTE_FILE, "sampling.lock", "identity.lock"};
#define NFILES 4
enum { K_RANDOM, K_TRUNC, K_FIFO, K_DIR, K_HARD, K_SYM, NKINDS };
static const char *KINDS[] = {"random bytes", "truncation", "FIFO", "directory", "hard link",
                              "symbolic link"};

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
    (void)st, (void)flag, (void)f;
    return remove(p) == 0 || errno == ENOENT ? 0 : -1;
}
static void rm_rf(const char *p) { nftw(p, rm_one, 16, FTW_DEPTH | FTW_PHYS); }

static void path_of(char *out, size_t n, const char *dir, const char *f)
{
    snprintf(out, n, "%s/%s", dir, f);
}

static int copy_file(const char *from, const char *to)
{
    int a = open(from, O_RDONLY), b = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    char buf[65536];
    ssize_t k;
    int ok = a >= 0 && b >= 0;
    while (ok && (k = read(a, buf, sizeof buf)) > 0) ok = write(b, buf, (size_t)k) == k;
    if (a >= 0) close(a);
    if (b >= 0) close(b);
    return ok ? 0 : -1;
}

/* Random bytes into an existing file (which may be mapped by the workers):
 * the whole file, or a few spans, header included half of the time. */
static void scribble(const char *p, uint64_t *seed)
{
    int fd = open(p, O_WRONLY | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0) return;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0) {
        close(fd);
        return;
    }
    uint64_t r = rnd(seed);
    unsigned char buf[4096];
    if (r % 3 == 0) { /* all of it */
        for (off_t o = 0; o < st.st_size; o += (off_t)sizeof buf) {
            for (size_t i = 0; i < sizeof buf; i++) buf[i] = (unsigned char)rnd(seed);
            if (pwrite(fd, buf, sizeof buf, o) < 0) break;
        }
    } else {
        int spans = 1 + (int)(rnd(seed) % 16);
        for (int s = 0; s < spans; s++) {
            size_t len = 1 + rnd(seed) % 256;
            off_t o = (off_t)(rnd(seed) % (uint64_t)st.st_size);
            if (s == 0 && (r & 1)) o = 0; /* the header */
            for (size_t i = 0; i < len; i++) buf[i] = (unsigned char)rnd(seed);
            if (o + (off_t)len > st.st_size) len = (size_t)(st.st_size - o);
            if (pwrite(fd, buf, len, o) < 0) break;
        }
    }
    close(fd);
}

/* Puts KIND in place of the state file F (atomically where a rename can). */
static void spoil(int f, int kind, uint64_t *seed)
{
    char p[1000], tmp[1000], tgt[1000];
    path_of(p, sizeof p, g_state, FILES[f]);
    snprintf(tmp, sizeof tmp, "%s/.spoil", g_state);
    unlink(tmp);
    switch (kind) {
    case K_RANDOM:
        if (access(p, F_OK) != 0) {
            path_of(tgt, sizeof tgt, g_good, FILES[f]);
            copy_file(tgt, p);
        }
        scribble(p, seed);
        return;
    case K_TRUNC: {
        struct stat st;
        if (lstat(p, &st) != 0) {
            path_of(tgt, sizeof tgt, g_good, FILES[f]);
            copy_file(tgt, p);
            lstat(p, &st);
        }
        off_t to = st.st_size > 1 ? (off_t)(rnd(seed) % (uint64_t)st.st_size) : 0;
        if (truncate(p, to) != 0) perror("truncate");
        return;
    }
    case K_FIFO:
        if (mkfifo(tmp, 0600) == 0 && rename(tmp, p) != 0) perror("rename fifo");
        return;
    case K_DIR:
        unlink(p); /* a folder cannot be renamed over a file */
        if (mkdir(p, 0700) != 0) perror("mkdir");
        return;
    case K_HARD:
        snprintf(tgt, sizeof tgt, "%s/hard_target", g_out);
        if (link(tgt, tmp) == 0 && rename(tmp, p) != 0) perror("rename link");
        return;
    case K_SYM:
        snprintf(tgt, sizeof tgt, "%s/sym_target", g_out);
        if (symlink(tgt, tmp) == 0 && rename(tmp, p) != 0) perror("rename symlink");
        return;
    }
}

/* The corruption stops: what replaced the file goes (never what it points
 * to); spoiled content stays, for the library to repair. */
static void restore(int f, int kind)
{
    char p[1000];
    path_of(p, sizeof p, g_state, FILES[f]);
    if (kind == K_DIR) rmdir(p);
    else if (kind >= K_FIFO) unlink(p);
}

/* The files outside the folder: content, size, mtime; and the names there. */
struct outside {
    char sig[4096];
};
static void outside_sig(struct outside *o)
{
    size_t n = 0;
    o->sig[0] = 0;
    DIR *d = opendir(g_out);
    if (!d) return;
    struct dirent *e;
    char names[16][64];
    int k = 0;
    while ((e = readdir(d)) && k < 16)
        if (e->d_name[0] != '.' && strlen(e->d_name) < sizeof names[0])
            memcpy(names[k++], e->d_name, strlen(e->d_name) + 1);
    closedir(d);
    for (int i = 0; i < k; i++)
        for (int j = i + 1; j < k; j++)
            if (strcmp(names[i], names[j]) > 0) {
                char t[64];
                memcpy(t, names[i], 64), memcpy(names[i], names[j], 64), memcpy(names[j], t, 64);
            }
    for (int i = 0; i < k; i++) {
        char p[2000], buf[256] = {0};
        snprintf(p, sizeof p, "%s/%s", g_out, names[i]);
        struct stat st;
        if (lstat(p, &st) != 0) continue;
        int fd = open(p, O_RDONLY | O_NOFOLLOW);
        ssize_t r = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
        if (fd >= 0) close(fd);
        uint64_t h = 1469598103934665603ull;
        for (ssize_t j = 0; j < r; j++) h = (h ^ (unsigned char)buf[j]) * 1099511628211ull;
        n += (size_t)snprintf(o->sig + n, sizeof o->sig - n, "%s %lld %ld.%09ld %lu %llx\n",
                              names[i], (long long)st.st_size, (long)st.st_mtim.tv_sec,
                              st.st_mtim.tv_nsec, (unsigned long)st.st_nlink,
                              (unsigned long long)h);
        if (n >= sizeof o->sig) break;
    }
}

/* ---- parent: workers -------------------------------------------------------- */

static pid_t g_kid[MAXW];
static int g_nkids;
static int g_seq;
static double g_bound_s = 10; /* any one step of a worker */

static pid_t spawn(int id)
{
    memset(&S->w[id], 0, sizeof S->w[id]);
    pid_t p = fork();
    if (p == 0) {
        char ids[16];
        snprintf(ids, sizeof ids, "%d", id);
        char shm[900];
        snprintf(shm, sizeof shm, "%s/shm", g_base);
        execl(g_self, g_self, "worker", shm, ids, (char *)NULL);
        _exit(127);
    }
    g_kid[id] = p;
    if (id >= g_nkids) g_nkids = id + 1;
    return p;
}

/* Waits until *p >= v; 0, or -1 when the worker died or the bound passed. */
static int await(int id, int *p, int v, const char *what, const char *cname)
{
    uint64_t t0 = now_ns();
    while (__atomic_load_n(p, __ATOMIC_ACQUIRE) < v) {
        int st;
        if (waitpid(g_kid[id], &st, WNOHANG) == g_kid[id]) {
            CHECK(0, "%s: worker %d died while %s: status 0x%x%s", cname, id, what, st,
                  WIFSIGNALED(st) ? " (killed by a signal)" : "");
            g_kid[id] = 0;
            return -1;
        }
        if ((double)(now_ns() - t0) / 1e9 > g_bound_s) {
            CHECK(0, "%s: worker %d hangs while %s (%.0f s)", cname, id, what, g_bound_s);
            return -1;
        }
        usleep(200);
    }
    return 0;
}

static int command(int id, int op, const char *cname)
{
    if (!g_kid[id]) return -1;
    int seq = ++g_seq;
    __atomic_store_n(&S->w[id].cmd, seq << 4 | op, __ATOMIC_RELEASE);
    static const char *names[] = {"", "churning", "freeing", "filling", "idle", "exiting"};
    return await(id, &S->w[id].ack, seq, names[op], cname);
}

static void churn_all(int n)
{
    for (int i = 0; i < n; i++)
        if (g_kid[i]) __atomic_store_n(&S->w[i].cmd, ++g_seq << 4 | OP_CHURN, __ATOMIC_RELEASE);
}

/* ---- parent: the monitor thread ------------------------------------------------ */

static struct {
    int on;        /* sample */
    int strict;    /* container-wide bound (else per process) */
    int npids;
    int pids[MAXW];
    uint64_t max_container, max_proc, samples;
    int over;      /* samples past the bound (strict or per process) */
    uint64_t worst;
} M;
static pthread_mutex_t m_mu = PTHREAD_MUTEX_INITIALIZER;

/* NVML memory of our pids: per pid into per[], the sum returned. */
static uint64_t nvml_mem(const int *pids, int n, uint64_t *per)
{
    nvmlDevice_t d;
    nvmlProcessInfo_t p[128];
    unsigned cnt = 128, ndev = 1;
    for (int k = 0; k < n; k++) per[k] = 0;
    /* The device the workers allocate on: the last one. */
    if (nvmlDeviceGetCount_v2(&ndev) != NVML_SUCCESS || ndev < 1 ||
        nvmlDeviceGetHandleByIndex_v2(ndev - 1, &d) != NVML_SUCCESS ||
        nvmlDeviceGetComputeRunningProcesses_v3(d, &cnt, p) != NVML_SUCCESS)
        return 0;
    uint64_t s = 0;
    for (unsigned i = 0; i < cnt && i < 128; i++)
        for (int k = 0; k < n; k++)
            if (pids[k] && (unsigned)pids[k] == p[i].pid) {
                per[k] += p[i].usedGpuMemory;
                s += p[i].usedGpuMemory;
            }
    return s;
}

static void *monitor(void *arg)
{
    (void)arg;
    for (;;) {
        pthread_mutex_lock(&m_mu);
        if (M.on) {
            uint64_t per[MAXW];
            uint64_t s = nvml_mem(M.pids, M.npids, per);
            M.samples++;
            if (s > M.max_container) M.max_container = s;
            for (int k = 0; k < M.npids; k++) {
                if (per[k] > M.max_proc) M.max_proc = per[k];
                if (per[k] > CAP + CTX) M.over++, M.worst = per[k] > M.worst ? per[k] : M.worst;
            }
            if (M.strict && s > CAP + CTX) M.over++, M.worst = s > M.worst ? s : M.worst;
        }
        pthread_mutex_unlock(&m_mu);
        usleep(M.on ? 2000 : 5000);
    }
    return NULL;
}

static void monitor_pids(void)
{
    pthread_mutex_lock(&m_mu);
    M.npids = 0;
    for (int i = 0; i < g_nkids; i++)
        if (g_kid[i] && S->w[i].pid) M.pids[M.npids++] = S->w[i].pid;
    pthread_mutex_unlock(&m_mu);
}

/* ---- parent: forgeries ---------------------------------------------------------- */

enum {
    F_USED0, F_USEDMAX, F_OWNER0, F_FOREIGN, F_REAPING, F_GEN, F_HW, F_DEVKEY, F_START,
    F_TOKMIN, F_TOKMAX, F_SHAREMAX, F_SHAREMIN, F_ACCRUE, F_REFILL, F_SAMPLE, F_UUIDSTATE,
    F_PROCS, NFORGE
};
static const char *FORGE[] = {
    "memory: a live slot's count = 0",       "memory: a live slot's count = 2^64 - 1",
    "memory: a live slot's owner = 0",       "memory: a foreign live pid owns a cap of bytes",
    "memory: a reaping live pid holds bytes", "memory: the generation changed",
    "memory: slots_hw = 0, then 2^32 - 1",    "memory: the device entry's key changed",
    "memory: start times of live slots",     "compute: tokens = INT64_MIN",
    "compute: tokens = INT64_MAX",           "compute: share = INT64_MAX",
    "compute: share = INT64_MIN",            "compute: accrual stamp +10^6 s",
    "compute: refill stamp +10^6 s",         "compute: sample stamp +10^6 s",
    "compute: every uuid line 'being claimed'", "compute: the process table random",
};
/* Forgeries that the documented exposure covers (a lower count elsewhere). */
static int forge_exposed(int k) { return k == F_USED0 || k == F_OWNER0; }

static void *map_state(const char *f, size_t size)
{
    char p[1000];
    path_of(p, sizeof p, g_state, f);
    int fd = open(p, O_RDWR | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0) return NULL;
    struct stat st;
    void *m = MAP_FAILED;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= (off_t)size)
        m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    return m == MAP_FAILED ? NULL : m;
}

static void forge(int k, uint64_t *seed)
{
    if (k < F_TOKMIN) {
        cc_mem_region_t *r = map_state(CC_MEM_REGION_FILE, CC_MEM_FILE_SIZE);
        if (!r) {
            CHECK(0, "forge: cannot map memory.region");
            return;
        }
        for (int i = 0; i < CC_MEM_SLOTS; i++) {
            uint32_t o = __atomic_load_n(&r->proc[i].owner, __ATOMIC_SEQ_CST);
            int live = o && !(o & CC_MEM_REAPING);
            switch (k) {
            case F_USED0:
                if (live) __atomic_store_n(&r->used[0][i], 0, __ATOMIC_SEQ_CST);
                break;
            case F_USEDMAX:
                if (live) __atomic_store_n(&r->used[0][i], UINT64_MAX, __ATOMIC_SEQ_CST);
                break;
            case F_OWNER0:
                if (live) __atomic_store_n(&r->proc[i].owner, 0, __ATOMIC_SEQ_CST);
                break;
            case F_FOREIGN:
            case F_REAPING:
                if (!o && i >= 100 && i < 104) { /* free slots: a live pid that is no client */
                    __atomic_store_n(&r->used[0][i], CAP, __ATOMIC_SEQ_CST);
                    __atomic_store_n(&r->proc[i].owner,
                                     (uint32_t)getpid() | (k == F_REAPING ? CC_MEM_REAPING : 0),
                                     __ATOMIC_SEQ_CST);
                }
                break;
            case F_START:
                if (live) __atomic_store_n(&r->proc[i].start_time, rnd(seed), __ATOMIC_RELAXED);
                break;
            }
        }
        if (k == F_GEN) __atomic_add_fetch(&r->generation, 0x1000, __ATOMIC_SEQ_CST);
        if (k == F_HW) {
            __atomic_store_n(&r->slots_hw, 0, __ATOMIC_SEQ_CST);
            usleep(50000);
            __atomic_store_n(&r->slots_hw, UINT32_MAX, __ATOMIC_SEQ_CST);
        }
        if (k == F_DEVKEY)
            for (int d = 0; d < CC_MEM_DEVS; d++)
                if (__atomic_load_n(&r->dev[d].key, __ATOMIC_SEQ_CST))
                    __atomic_store_n(&r->dev[d].key, rnd(seed) | 1, __ATOMIC_SEQ_CST);
        munmap(r, CC_MEM_FILE_SIZE);
        return;
    }
    cc_compute_region_t *r = map_state(CC_COMPUTE_FILE, CC_COMPUTE_FILE_SIZE);
    if (!r) {
        CHECK(0, "forge: cannot map compute.region");
        return;
    }
    uint64_t far = now_ns() + 1000000000000000ull;
    for (unsigned l = 0; l < CC_COMPUTE_DEVICES; l++) {
        cc_compute_dev_t *d = &r->dev[l];
        switch (k) {
        case F_TOKMIN: __atomic_store_n(&d->tokens, INT64_MIN, __ATOMIC_RELAXED); break;
        case F_TOKMAX: __atomic_store_n(&d->tokens, INT64_MAX, __ATOMIC_RELAXED); break;
        case F_SHAREMAX: __atomic_store_n(&d->share, INT64_MAX, __ATOMIC_RELAXED); break;
        case F_SHAREMIN: __atomic_store_n(&d->share, INT64_MIN, __ATOMIC_RELAXED); break;
        case F_ACCRUE: __atomic_store_n(&r->accrued_ns[l], far, __ATOMIC_RELAXED); break;
        case F_REFILL: __atomic_store_n(&d->refill_ns, far, __ATOMIC_RELAXED); break;
        case F_SAMPLE: __atomic_store_n(&d->sample_ns, far, __ATOMIC_RELAXED); break;
        case F_UUIDSTATE: __atomic_store_n(&r->uuid[l].state, 1, __ATOMIC_RELAXED); break;
        }
    }
    if (k == F_PROCS) {
        unsigned char *p = (unsigned char *)r->proc;
        for (size_t i = 0; i < sizeof r->proc; i++)
            __atomic_store_n(&p[i], (unsigned char)rnd(seed), __ATOMIC_RELAXED);
    }
    munmap(r, CC_COMPUTE_FILE_SIZE);
}

/* ---- parent: one case ------------------------------------------------------------ */

enum { T_BEFORE, T_DURING, T_FORGE, T_CLEAN };
static int g_cases, g_failed_cases;
static double g_recover_s = 5;
static double g_worst_recovery;

static void stop_all(const char *cname)
{
    for (int i = 0; i < g_nkids; i++) {
        if (!g_kid[i]) continue;
        int seq = ++g_seq;
        __atomic_store_n(&S->w[i].cmd, seq << 4 | OP_EXIT, __ATOMIC_RELEASE);
    }
    for (int i = 0; i < g_nkids; i++) {
        if (!g_kid[i]) continue;
        uint64_t t0 = now_ns();
        int st = 0, done = 0;
        while (!done && (double)(now_ns() - t0) / 1e9 < g_bound_s) {
            done = waitpid(g_kid[i], &st, WNOHANG) == g_kid[i];
            if (!done) usleep(500);
        }
        if (!done) {
            CHECK(0, "%s: worker %d does not exit (hang): killed", cname, i);
            kill(g_kid[i], SIGKILL);
            waitpid(g_kid[i], &st, 0);
        } else {
            CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: worker %d: status 0x%x%s", cname, i,
                  st, WIFSIGNALED(st) ? " (killed by a signal)" : "");
        }
        CHECK(!S->w[i].err, "%s: worker %d: a CUDA call failed (%d)", cname, i, S->w[i].err);
        g_kid[i] = 0;
    }
    g_nkids = 0;
}

/* Frees everything, then fills the container through each worker in turn
 * (the late joiner first): the NVML total must end within one SMALL chunk
 * of the cap and not past it plus one context. */
static int fill_ok(const char *cname, uint64_t *total)
{
    for (int i = 0; i < g_nkids; i++)
        if (command(i, OP_FREE, cname) != 0) return -1;
    static const int order[MAXW] = {NW, 0, 1, 2};
    for (int k = 0; k < MAXW; k++)
        if (order[k] < g_nkids && command(order[k], OP_FILL, cname) != 0) return -1;
    uint64_t per[MAXW];
    pthread_mutex_lock(&m_mu);
    *total = nvml_mem(M.pids, M.npids, per);
    pthread_mutex_unlock(&m_mu);
    return *total + SMALL > CAP && *total <= CAP + CTX;
}

/* --only A|B: the cases whose name contains A or B. */
static int selected(const char *only, const char *name)
{
    if (!only) return 1;
    char buf[400];
    snprintf(buf, sizeof buf, "%s", only);
    for (char *save = NULL, *t = strtok_r(buf, "|", &save); t; t = strtok_r(NULL, "|", &save))
        if (strstr(name, t)) return 1;
    return 0;
}

static void run_case(int timing, int f, int kind, uint64_t seed)
{
    char cname[200];
    if (timing == T_FORGE) snprintf(cname, sizeof cname, "forged, %s", FORGE[kind]);
    else if (timing == T_CLEAN) snprintf(cname, sizeof cname, "clean");
    else
        snprintf(cname, sizeof cname, "%s: %s in place of %s", timing == T_BEFORE ? "before" : "during",
                 KINDS[kind], FILES[f]);
    int fails0 = check_failures;
    g_cases++;
    struct outside o0, o1;
    outside_sig(&o0);
    rm_rf(g_state);
    mkdir(g_state, 0700);
    int memfile = timing != T_FORGE && timing != T_CLEAN && f == 0;
    /* The documented exposure (docs/memory.md): the container bound is
     * per process until the corruption stopped and the recovery passed. */
    int exposed = (memfile && timing == T_DURING) || (memfile && timing == T_BEFORE && kind >= K_FIFO) ||
                  (timing == T_FORGE && forge_exposed(kind));
    if (timing == T_BEFORE) spoil(f, kind, &seed);
    uint64_t t_case = now_ns();
    for (int i = 0; i < NW; i++) spawn(i);
    int ok = 1;
    for (int i = 0; i < NW && ok; i++) ok = await(i, &S->w[i].ready, 1, "starting", cname) == 0;
    pthread_mutex_lock(&m_mu);
    M.on = 0;
    M.strict = !exposed;
    M.max_container = M.max_proc = M.samples = 0;
    M.over = 0;
    M.worst = 0;
    pthread_mutex_unlock(&m_mu);
    monitor_pids();
    __atomic_store_n(&M.on, 1, __ATOMIC_RELEASE);
    uint64_t t_rec = 0;
    if (ok) {
        churn_all(NW);
        usleep(80000);
        if (timing == T_DURING) {
            if (kind == K_RANDOM)
                for (int r = 0; r < 4; r++) spoil(f, kind, &seed), usleep(25000);
            else spoil(f, kind, &seed), usleep(100000);
        } else if (timing == T_FORGE) {
            forge(kind, &seed);
            usleep(100000);
        } else usleep(100000);
        if (timing == T_BEFORE || timing == T_DURING) restore(f, kind);
        usleep(50000);
        /* The late joiner, then: after the corruption, nothing lost. */
        spawn(NW);
        ok = await(NW, &S->w[NW].ready, 1, "starting (late joiner)", cname) == 0;
        monitor_pids();
        uint64_t t0 = now_ns(), total = 0;
        int good = 0;
        while (ok) {
            int r = fill_ok(cname, &total);
            if (r < 0) ok = 0;
            if (r == 1) good = 1;
            if (r != 0 || (double)(now_ns() - t0) / 1e9 > g_recover_s) break;
            usleep(50000);
        }
        t_rec = now_ns() - t0;
        CHECK(!ok || good, "%s: after the corruption stopped the container fills to %.2f MiB, not "
              "(%.2f, %.2f] MiB, after %.1f s", cname, (double)total / MIB,
              (double)(CAP - SMALL) / MIB, (double)(CAP + CTX) / MIB, (double)t_rec / 1e9);
        if (good && (double)t_rec / 1e9 > g_worst_recovery) g_worst_recovery = (double)t_rec / 1e9;
        /* From here the container bound holds in every case. */
        pthread_mutex_lock(&m_mu);
        M.strict = 1;
        pthread_mutex_unlock(&m_mu);
        /* Launches flow (the compute cap recovered, whatever was forged). */
        if (ok) {
            uint64_t l0[MAXW], tl = now_ns();
            for (int i = 0; i < g_nkids; i++) l0[i] = __atomic_load_n(&S->w[i].launches, __ATOMIC_ACQUIRE);
            for (int i = 0; i < g_nkids; i++)
                while (__atomic_load_n(&S->w[i].launches, __ATOMIC_ACQUIRE) < l0[i] + 3 &&
                       (double)(now_ns() - tl) / 1e9 < g_bound_s)
                    usleep(1000);
            for (int i = 0; i < g_nkids; i++)
                CHECK(__atomic_load_n(&S->w[i].launches, __ATOMIC_ACQUIRE) >= l0[i] + 3,
                      "%s: worker %d's launches stopped (hang)", cname, i);
        }
    }
    __atomic_store_n(&M.on, 0, __ATOMIC_RELEASE);
    pthread_mutex_lock(&m_mu);
    int over = M.over;
    uint64_t worst = M.worst, maxc = M.max_container, samples = M.samples;
    pthread_mutex_unlock(&m_mu);
    CHECK(over == 0, "%s: the cap was passed in %d sample(s): %.1f MiB (cap %llu MiB + a context of "
          "%llu%s)", cname, over, (double)worst / MIB, CAP / MIB, CTX / MIB,
          exposed ? ", per process" : "");
    stop_all(cname);
    outside_sig(&o1);
    CHECK(!strcmp(o0.sig, o1.sig), "%s: files outside the folder changed:\nbefore:\n%safter:\n%s",
          cname, o0.sig, o1.sig);
    int failed = check_failures != fails0;
    g_failed_cases += failed;
    if (failed || getenv("FAULTS_VERBOSE"))
        printf("%-4s %-62s max %6.1f MiB (%llu samples), recovered in %.2f s, case %.2f s, seed %llx\n",
               failed ? "FAIL" : "ok", cname, (double)maxc / MIB, (unsigned long long)samples,
               (double)t_rec / 1e9, (double)(now_ns() - t_case) / 1e9, (unsigned long long)seed);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc >= 4 && !strcmp(argv[1], "worker")) {
        int fd = open(argv[2], O_RDWR);
        if (fd < 0) return 3;
        S = mmap(NULL, sizeof *S, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        close(fd);
        if (S == MAP_FAILED) return 3;
        return worker(atoi(argv[3]));
    }
    if (argc < 2) {
        fprintf(stderr, "usage: %s BASE_DIR [--long N] [--only SUBSTRING]\n", argv[0]);
        return 2;
    }
    int rounds = getenv("FAULTS_LONG") ? atoi(getenv("FAULTS_LONG")) : 1;
    const char *only = NULL;
    for (int i = 2; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--long")) rounds = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--only")) only = argv[i + 1];
    }
    if (rounds < 1) rounds = 1;
    const char *pre = getenv("FAULTS_PRELOAD");
    if (!pre) {
        fprintf(stderr, "FAULTS_PRELOAD is not set\n");
        return 2;
    }
    if (readlink("/proc/self/exe", g_self, sizeof g_self - 1) <= 0) return 1;
    snprintf(g_base, sizeof g_base, "%s", argv[1]);
    rm_rf(g_base);
    mkdir(g_base, 0700);
    snprintf(g_state, sizeof g_state, "%s/state", g_base);
    snprintf(g_good, sizeof g_good, "%s/good", g_base);
    snprintf(g_out, sizeof g_out, "%s/outside", g_base);
    mkdir(g_good, 0700);
    mkdir(g_out, 0700);
    char p[1000];
    const char *outs[] = {"canary", "hard_target", "sym_target"};
    for (int i = 0; i < 3; i++) {
        snprintf(p, sizeof p, "%s/%s", g_out, outs[i]);
        int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd < 0 || write(fd, "precious, not a region\n", 23) != 23) return 1;
        close(fd);
    }
    snprintf(p, sizeof p, "%s/shm", g_base);
    int fd = open(p, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || ftruncate(fd, sizeof *S) != 0) return 1;
    S = mmap(NULL, sizeof *S, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (S == MAP_FAILED) return 1;
    /* The workers' environment: a capped container on the simulator. The
     * parent itself is not preloaded (it only reads NVML). */
    setenv("LD_PRELOAD", pre, 1);
    setenv("CUDACAP_STATE_DIR", g_state, 1);
    setenv("CUDACAP_MEM_LIMIT", "256m", 1);
    setenv("CUDACAP_SM_LIMIT", "50", 1);
    setenv("CUDACAP_SIM_CTX_MEM", "16m", 1);
    setenv("CUDACAP_LOG_LEVEL", getenv("FAULTS_LOG_LEVEL") ? getenv("FAULTS_LOG_LEVEL") : "0", 1);
    if (getenv("FAULTS_RECOVER_S")) g_recover_s = atof(getenv("FAULTS_RECOVER_S"));
    if (nvmlInit_v2() != NVML_SUCCESS) {
        fprintf(stderr, "nvmlInit failed\n");
        return 1;
    }
    pthread_t mt;
    pthread_create(&mt, NULL, monitor, NULL);
    uint64_t seed = getenv("FAULTS_SEED") ? strtoull(getenv("FAULTS_SEED"), NULL, 0)
                                          : (uint64_t)now_ns() | 1;
    uint64_t t0 = now_ns();
    /* A clean run first: the harness itself, and good copies of every file. */
    run_case(T_CLEAN, 0, 0, seed);
    for (int i = 0; i < NFILES; i++) {
        char from[1000], to[1000];
        path_of(from, sizeof from, g_state, FILES[i]);
        path_of(to, sizeof to, g_good, FILES[i]);
        if (copy_file(from, to) != 0) CHECK(0, "the clean run left no %s", FILES[i]);
    }
    for (int round = 0; round < rounds; round++) {
        for (int timing = T_BEFORE; timing <= T_DURING; timing++)
            for (int f = 0; f < NFILES; f++)
                for (int k = 0; k < NKINDS; k++) {
                    char cn[200];
                    snprintf(cn, sizeof cn, "%s: %s in place of %s",
                             timing == T_BEFORE ? "before" : "during", KINDS[k], FILES[f]);
                    if (!selected(only, cn)) continue;
                    run_case(timing, f, k, rnd(&seed));
                }
        for (int k = 0; k < NFORGE; k++) {
            char cn[200];
            snprintf(cn, sizeof cn, "forged, %s", FORGE[k]);
            if (!selected(only, cn)) continue;
            run_case(T_FORGE, 0, k, rnd(&seed));
        }
    }
    printf("faults_lib: %d cases (%d rounds), %d failed, worst recovery %.2f s, %.1f s\n", g_cases,
           rounds, g_failed_cases, g_worst_recovery, (double)(now_ns() - t0) / 1e9);
    CHECK_EXIT();
}

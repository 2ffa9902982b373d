/* Host pid discovery (hostpid.h), one for the memory and the compute cap.
 *
 * Two ways in, both ending in record():
 *  - at context creation (the wrappers below): under a container-wide lock
 *    (identity.lock in the state folder), NVML's process list before and
 *    after the real call; the one new pid no other slot of the container
 *    claims is ours. Processes of the container starting at once take turns,
 *    so each sees only its own pid appear. Armed only while the pid is
 *    unknown, NSpid cannot tell and some cap is set: afterwards a wrapper
 *    costs one load.
 *  - cc_hostpid(), retried by its callers (memory overhead refresh, the
 *    compute watcher): NSpid, our own pid listed by NVML, or the single
 *    unclaimed pid on the device. Never a guess among several. */
#include "hostpid.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cap/compute.h"
#include "cap/compute_region.h"
#include "memory_acct.h"
#include "cap/memledger.h"
#include "common/log.h"
#include "devices.h"
#include "hook.h"
#include "hook/process.h"
#include "memory_acct.h"
#include "region/region.h"

#define CC_ID_LOCK_FILE "identity.lock"
#define CC_ID_PROCS 128

static uint32_t g_hp;                 /* discovered host pid (relaxed) */
static uint32_t g_nspid = UINT32_MAX; /* cached NSpid answer; UINT32_MAX: not read */

typedef nvmlReturn_t (*procs_fn)(nvmlDevice_t, unsigned int *, nvmlProcessInfo_t *);

int cc_nvml_procs(int ordinal, nvmlProcessInfo_t *p, unsigned *n)
{
    const struct cc_device *dv = cc_device(ordinal);
    if (!dv || !dv->nvml) return -1;
    cc_nvml_init();
    static procs_fn fn;
    if (!fn) fn = (procs_fn)cc_lib_sym(CC_LIB_NVML, "nvmlDeviceGetComputeRunningProcesses_v3");
    if (!fn) return -1;
    return fn(dv->nvml, n, p) == NVML_SUCCESS ? 0 : -1;
}

uint32_t cc_hostpid_nspid(void)
{
    uint32_t c = __atomic_load_n(&g_nspid, __ATOMIC_RELAXED);
    if (c != UINT32_MAX) return c;
    c = cc_ml_nspid_host(); /* first NSpid field when there are several levels */
    __atomic_store_n(&g_nspid, c, __ATOMIC_RELAXED);
    return c;
}

uint32_t cc_hostpid_known(void) { return __atomic_load_n(&g_hp, __ATOMIC_RELAXED); }

/* Claimed by another live slot of this container, in either table. */
static int taken(uint32_t hp)
{
    if (cc_ml_host_pid_taken(hp)) return 1;
    cc_compute_region_t *r = cc_compute_region();
    return r && cc_compute_host_pid_taken(r, hp, (uint32_t)getpid());
}

static void record(uint32_t hp)
{
    __atomic_store_n(&g_hp, hp, __ATOMIC_SEQ_CST);
    cc_ml_set_host_pid(hp);
    cc_compute_note_host_pid(hp);
    cc_debug("host pid %u (pid %d here)", hp, (int)getpid());
}

#ifdef CC_TEST_NSPID_ONLY
/* Negative control (tests/compute.cmake): the old compute-side discovery,
 * the first NSpid field whatever the levels (the container pid when the
 * container has its own /proc). */
#include "os/os.h"
static uint32_t nspid_only(void)
{
    uint32_t first;
    return cc_os_nspid(&first, 1) >= 1 && first ? first : (uint32_t)getpid();
}
#endif

uint32_t cc_hostpid(int ordinal)
{
    uint32_t hp = cc_hostpid_known();
    if (__builtin_expect(hp != 0, 1)) {
        /* The ledger slot may have been claimed after the discovery. */
        if (cc_ml_host_pid() != hp) cc_ml_set_host_pid(hp);
        return hp;
    }
#ifdef CC_TEST_NSPID_ONLY
    hp = nspid_only();
    record(hp);
    return hp;
#endif
    hp = cc_hostpid_nspid();
    if (!hp) {
        nvmlProcessInfo_t p[CC_ID_PROCS];
        unsigned n = CC_ID_PROCS, cand = 0, ncand = 0;
        if (cc_nvml_procs(ordinal, p, &n) != 0) return 0;
        for (unsigned i = 0; i < n; i++) {
            if (p[i].pid == (unsigned)getpid()) { /* no pid namespace in between */
                cand = p[i].pid;
                ncand = 1;
                break;
            }
            if (!taken(p[i].pid)) cand = p[i].pid, ncand++;
        }
        if (ncand != 1) return 0; /* none yet, or ambiguous: retry later */
        hp = cand;
    }
    record(hp);
    return hp;
}

void cc_hostpid_fork_child(void)
{
    __atomic_store_n(&g_hp, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&g_nspid, UINT32_MAX, __ATOMIC_RELAXED);
}

/* ---- context creation ---------------------------------------------------- */

struct ident {
    int armed, fd, ordinal;
    unsigned n;
    unsigned pid[CC_ID_PROCS];
};

static int any_cap(void)
{
    for (int i = 0; i < CC_MAX_DEVICES; i++)
        if (cc_cfg.mem_limit[i] || (cc_cfg.sm_limit[i] > 0 && cc_cfg.sm_limit[i] < 100)) return 1;
    return 0;
}

static int list(int ordinal, unsigned *pids, unsigned *n)
{
    nvmlProcessInfo_t p[CC_ID_PROCS];
    unsigned k = CC_ID_PROCS;
    if (cc_nvml_procs(ordinal, p, &k) != 0) return -1;
    if (k > CC_ID_PROCS) k = CC_ID_PROCS;
    for (unsigned i = 0; i < k; i++) pids[i] = p[i].pid;
    *n = k;
    return 0;
}

/* Cost when armed: an open, a lock (waiting at most 2 s for another process
 * of the container creating its context), one NVML call. The same turn is
 * taken, without the NVML lists, while the container has not learned the
 * size of a context on a capped device (memory_ctx.c): the first process
 * measures it for the others. */
static void ident_begin(struct ident *c, CUdevice dev)
{
    c->armed = 0;
    c->fd = -1;
    c->ordinal = (int)dev;
    int id = cc_hostpid_known() == 0 && cc_hostpid_nspid() == 0 && any_cap();
#ifdef CC_TEST_NSPID_ONLY
    id = 0;
#endif
    if (__builtin_expect(!id, 1) && !cc_mem_ctx_unlearned(dev)) return;
    char path[CC_PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/%s", cc_cfg.state_dir, CC_ID_LOCK_FILE);
    /* The folder may not exist yet: the regions are made at the first
     * allocation or launch, after this. Without it there were no turns, and
     * processes starting together resolved nothing (compute.hostpid.join,
     * from a clean clone). No folder (""): no turns, and never a lock file
     * in some other folder. */
    if (cc_cfg.state_dir[0]) {
        cc_region_ensure_dir(cc_cfg.state_dir);
        const char *why = NULL;
        c->fd = cc_state_open(path, O_RDWR | O_CREAT, 0666, &why);
        if (c->fd < 0)
            cc_log_once(CC_LOG_WARN, "%s: %s (%s); processes starting together may not resolve "
                                     "their host pids", path, why, strerror(errno));
    }
#ifdef CC_TEST_NO_ID_LOCK /* negative control of compute.hostpid.join: no turns */
    if (c->fd >= 0) close(c->fd);
    c->fd = -1;
#endif
    if (c->fd >= 0) {
        int ok = 0;
        for (int i = 0; i < 2000 && !ok; i++) {
            ok = cc_lock_range(c->fd, 0, 1, F_WRLCK, 0) == 0;
            if (!ok && errno != EAGAIN && errno != EACCES) break;
            if (!ok) {
                struct timespec ts = {0, 1000000};
                nanosleep(&ts, NULL);
            }
        }
        if (!ok) { /* no turn: the diff may see others; cc_hostpid() retries */
            close(c->fd);
            c->fd = -1;
        }
    }
    if (id && list(c->ordinal, c->pid, &c->n) == 0) c->armed = 1;
}

static void ident_end(struct ident *c, CUresult r)
{
    if (c->armed && r == CUDA_SUCCESS && cc_hostpid_known() == 0) {
        unsigned after[CC_ID_PROCS], n = 0, cand = 0, ncand = 0;
        if (list(c->ordinal, after, &n) == 0)
            for (unsigned i = 0; i < n; i++) {
                if (after[i] == (unsigned)getpid()) {
                    cand = after[i];
                    ncand = 1;
                    break;
                }
                int old = 0;
                for (unsigned j = 0; j < c->n && !old; j++) old = c->pid[j] == after[i];
                if (!old && !taken(after[i])) cand = after[i], ncand++;
            }
        if (ncand == 1) record(cand);
    }
}

static void ident_close(struct ident *c)
{
    if (c->fd >= 0) close(c->fd); /* drops the lock (OFD and POSIX alike) */
}

/* Every context-creating wrapper: the turn and the pid diff around the real
 * call, and the context admitted against the memory cap inside the turn. */
#define CC_CTX_CREATE(fn, dev, primary, call)                                       \
    do {                                                                            \
        cc_enter_cuda(CC_FN_##fn);                                                  \
        if (!CC_REAL(fn)) return cc_cuda_missing(CC_FN_##fn);                       \
        struct ident c_;                                                            \
        struct cc_ctx_adm a_;                                                       \
        ident_begin(&c_, dev);                                                      \
        CUresult r_ = cc_mem_ctx_admit(dev, primary, &a_) != 0 ? CUDA_ERROR_OUT_OF_MEMORY \
                                                               : CC_REAL(fn) call;  \
        ident_end(&c_, r_);                                                         \
        cc_mem_ctx_settle(&a_, r_); /* after the pid is known, inside the turn */   \
        ident_close(&c_);                                                           \
        return r_;                                                                  \
    } while (0)

CC_EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
    CC_CTX_CREATE(cuDevicePrimaryCtxRetain, dev, 1, (pctx, dev));
}

CC_EXPORT CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
    CC_CTX_CREATE(cuCtxCreate_v2, dev, 0, (pctx, flags, dev));
}

CC_EXPORT CUresult cuCtxCreate_v3(CUcontext *pctx, CUexecAffinityParam *params, int nparams,
                                  unsigned int flags, CUdevice dev)
{
    CC_CTX_CREATE(cuCtxCreate_v3, dev, 0, (pctx, params, nparams, flags, dev));
}

CC_EXPORT CUresult cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *params, unsigned int flags,
                                  CUdevice dev)
{
    CC_CTX_CREATE(cuCtxCreate_v4, dev, 0, (pctx, params, flags, dev));
}

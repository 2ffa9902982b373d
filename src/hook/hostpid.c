/* Host pid discovery (hostpid.h): the identity policy, one for the memory
 * and the compute cap. Two ways in, both ending in record():
 *  - at context creation (ctx_create.c, inside the identity turn of
 *    identity_lock.c): NVML's process list before and after the real call;
 *    the one new pid no other slot of the container claims is ours. Armed
 *    only while the pid is unknown, NSpid cannot tell and some cap is set:
 *    afterwards a context creation costs one load here.
 *  - cc_hostpid(), retried by its callers (memory overhead refresh, the
 *    compute watcher): NSpid, our own pid listed by NVML, or the single
 *    unclaimed pid on the device. Never a guess among several. */
#include "hostpid.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cap/cfg.h"
#include "cap/compute/compute.h"
#include "cap/compute/compute_region.h"
#include "cap/memledger.h"
#include "common/controls.h"
#include "common/fork.h"
#include "common/log.h"
#include "hook/process.h"

static uint32_t g_hp;                 /* discovered host pid (relaxed) */
static uint32_t g_nspid = UINT32_MAX; /* cached NSpid answer; UINT32_MAX: not read */

static void fork_child(void)
{
    /* The child is another process: forget. */
    __atomic_store_n(&g_hp, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&g_nspid, UINT32_MAX, __ATOMIC_RELAXED);
}

/* Before each first write of g_hp or g_nspid (registering again is a no-op):
 * a child forked after the write must find the reset registered. */
static void owned(void) { cc_fork_child_register(fork_child); }

uint32_t cc_hostpid_nspid(void)
{
    uint32_t c = __atomic_load_n(&g_nspid, __ATOMIC_RELAXED);
    if (c != UINT32_MAX) return c;
    c = cc_ml_nspid_host(); /* first NSpid field when there are several levels */
    owned();
    __atomic_store_n(&g_nspid, c, __ATOMIC_RELAXED);
    return c;
}

uint32_t cc_hostpid_known(void) { return __atomic_load_n(&g_hp, __ATOMIC_RELAXED); }

/* Claimed by another live slot of this container, in either table. */
static int taken(uint32_t hp)
{
    if (cc_ml_host_pid_taken(hp)) return 1;
    cc_compute_region_t *r = cc_compute_region();
    if (!r) return 0;
    struct cc_pkey me;
    cc_compute_pkey(&me);
    return cc_compute_host_pid_taken(r, hp, &me);
}

static void record(uint32_t hp)
{
    owned();
    __atomic_store_n(&g_hp, hp, __ATOMIC_SEQ_CST);
    cc_ml_set_host_pid(hp);
    cc_compute_note_host_pid(hp);
    cc_debug("host pid %u (pid %d here)", hp, (int)getpid());
}

/* Our host pid: NSpid's when the levels say it, else the one process of
 * the device's that no other process has taken; 0: none yet, or
 * ambiguous (retried later). */
static uint32_t CC_CONTROL_POINT(discover)(int ordinal)
{
    uint32_t hp = cc_hostpid_nspid();
    if (hp) return hp;
    nvmlProcessInfo_t p[CC_NVML_PROCS_MAX];
    unsigned n = CC_NVML_PROCS_MAX, cand = 0, ncand = 0;
    if (cc_nvml_procs(ordinal, p, &n) != 0) return 0;
    for (unsigned i = 0; i < n; i++) {
        if (p[i].pid == (unsigned)getpid()) return p[i].pid; /* no pid namespace in between */
        if (!taken(p[i].pid)) cand = p[i].pid, ncand++;
    }
    return ncand == 1 ? cand : 0;
}

uint32_t cc_hostpid(int ordinal)
{
    uint32_t hp = cc_hostpid_known();
    if (__builtin_expect(hp != 0, 1)) {
        /* The ledger slot may have been claimed after the discovery. */
        if (cc_ml_host_pid() != hp) cc_ml_set_host_pid(hp);
        return hp;
    }
    hp = discover(ordinal);
    if (hp) record(hp);
    return hp;
}

/* ---- the diff around a context creation ---------------------------------- */

static int any_cap(void)
{
    for (int i = 0; i < CC_MAX_DEVICES; i++)
        if (cc_cfg_mem_cap(i) || cc_cfg_sm_capped(i)) return 1;
    return 0;
}

static int CC_CONTROL_POINT(diff_wanted)(void)
{
    return cc_hostpid_known() == 0 && cc_hostpid_nspid() == 0 && any_cap();
}

int cc_hostpid_wanted(void) { return diff_wanted(); }

void cc_hostpid_diff_begin(struct cc_hostpid_diff *c, int ordinal)
{
    c->ordinal = ordinal;
    c->armed = cc_nvml_pids(ordinal, c->pid, &c->n) == 0;
}

void cc_hostpid_diff_end(const struct cc_hostpid_diff *c, int created)
{
    if (c->armed && created && cc_hostpid_known() == 0) {
        unsigned after[CC_NVML_PROCS_MAX], n = 0, cand = 0, ncand = 0;
        if (cc_nvml_pids(c->ordinal, after, &n) == 0)
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

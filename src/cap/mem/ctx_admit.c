/* Context admission (mem.h): a context is admitted like an
 * allocation. Before the driver creates one on a capped device, its
 * expected size is reserved as overhead with the ledger's exact check; a
 * context that does not fit fails with CUDA_ERROR_OUT_OF_MEMORY, the
 * driver's own answer. After the call the reservation is settled to what
 * NVML measures, and the first context of a process teaches the container
 * the size (memory region, ctx_size) for the next ones.
 *
 * Not hot: a context is created a few times per process. The wrappers
 * (hook/ctx_create.c) run this under the identity lock (hook/hostpid.c) while the size is unknown, so
 * processes starting together learn it from the first one. */
#include "cap/cfg.h"
#include "cap/mem/mem.h"
#include "cap/memledger.h"
#include "common/controls.h"
#include "common/log.h"

/* Before any process measured a context: about the H200's (~500 MiB with
 * CUDA 13), never more than a quarter of the cap. */
#define CC_CTX_DEFAULT (512ull << 20)

uint64_t cc_mem_ctx_expected(const struct cc_mem_device *m)
{
    uint64_t e = cc_ml_ctx_size(m->h);
    if (e) return e;
    /* Unknown: normally the container's first context, in an empty
     * container. A quarter of the cap at most, so that a small container
     * whose learned size was lost (a rebuild) still admits one. */
    e = cc_cfg.ctx_overhead ? cc_cfg.ctx_overhead : CC_CTX_DEFAULT;
    return e < cc_mem_cap(m) / 4 ? e : cc_mem_cap(m) / 4;
}

int cc_mem_ctx_unlearned(int ordinal)
{
    const struct cc_mem_device *m = cc_mem_dev_unmeasured(ordinal);
    return m && cc_ml_ctx_size(m->h) == 0;
}

/* The new context's expected size reserved on m, armed for the settling;
 * -1: it does not fit. */
static int CC_CONTROL_POINT(reserve_ctx)(const struct cc_mem_device *m, int ordinal, struct cc_ctx_adm *a)
{
    a->m = m;
    a->ordinal = ordinal;
    a->before = cc_ml_overhead(m->h);
    a->pend = cc_mem_ctx_expected(m);
    if (cc_mem_reserve_overhead(m, a->ordinal, a->pend) != 0) {
        cc_log_once(CC_LOG_WARN, "memory cap: refusing a new context on device %d: it needs "
                                 "about %llu MiB and the container uses %llu of %llu MiB",
                    ordinal, (unsigned long long)(a->pend >> 20),
                    (unsigned long long)(cc_ml_used(m->h) >> 20), (unsigned long long)(cc_mem_cap(m) >> 20));
        return -1;
    }
    a->armed = 1;
    return 0;
}

int cc_mem_ctx_admit(int ordinal, int exists, struct cc_ctx_adm *a)
{
    a->armed = 0;
    const struct cc_mem_device *m = cc_mem_dev_unmeasured(ordinal);
    if (!m) return 0;
    if (exists) return 0; /* an active primary context: costs nothing again */
    return reserve_ctx(m, ordinal, a);
}

/* A context measured alone: the size the container's next contexts are
 * admitted at (memory region, ctx_size). */
static void CC_CONTROL_POINT(learn_ctx)(const struct cc_mem_device *m, uint64_t ovh)
{
    cc_ml_set_ctx_size(m->h, ovh);
}

/* Not measurable (NVML's process list failing, the pid not joinable, MIG):
 * the context keeps what admission reserved for it (the configured
 * estimate, else the container's learned context size, else the default
 * at most a quarter of the cap). Charging 0 here, as before, left every
 * context of such a container outside its cap, unsaid (the fault loop,
 * nvml_procs from its first call on: 256 MiB held under 256 with two
 * 16 MiB contexts). */
static void CC_CONTROL_POINT(charge_unmeasured)(const struct cc_ctx_adm *a)
{
    uint64_t est = cc_cfg.ctx_overhead ? cc_cfg.ctx_overhead : a->pend;
    cc_log_once(CC_LOG_WARN, "memory cap: a context's memory on device %d cannot be measured "
                             "(NVML's process list); %llu MiB is charged for it "
                             "(CUDACAP_CTX_OVERHEAD sets the figure)",
                a->ordinal, (unsigned long long)(est >> 20));
    cc_ml_set_overhead(a->m->h, a->before + est);
}

void cc_mem_ctx_settle(struct cc_ctx_adm *a, int created)
{
    if (!a->armed) return;
    a->armed = 0;
    const struct cc_mem_device *m = a->m;
    if (!created) {
        cc_ml_unreserve_overhead(m->h, a->pend);
        return;
    }
    uint64_t ovh;
    if (cc_mem_measure_overhead(a->ordinal, &ovh)) {
        cc_ml_set_overhead(m->h, ovh);
        if (a->before == 0 && ovh > 0) learn_ctx(m, ovh);
        return;
    }
    charge_unmeasured(a);
}

/* The cost model: what a launch charges the bucket, in ns of device time.
 *
 * Blocks x threads (the seed, HAMi) misses caps whenever block durations
 * differ: one wave of 1.5 ms blocks and 64 waves of 24 us blocks take the
 * same device time and differ 64x in blocks. So a launch is charged its
 * measured duration: per (function or graph, grid size), sampled with a pair
 * of events around the launch (every launch until the first result, then
 * one per CC_COST_SAMPLE_NS per shape), and each timed launch is charged
 * exactly once its events complete (estimate corrected after the fact).
 * Elapsed time between events includes time the stream waited behind other
 * processes' kernels (a real GPU time-slices contexts the same way), so the
 * estimate is the minimum of the last CC_COST_WINDOW timings of the shape
 * (about 0.4 s): one unqueued timing in the window is enough, and a shape
 * that really got slower is followed within the window. */
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "cap/compute/bucket.h"
#include "cap/compute/capture.h"
#include "cap/compute/compute.h"
#include "cap/compute/gate.h"
#include "common/controls.h"
#include "common/log.h"
#include "cap/port.h"
#include "common/clock.h"
#include "common/fork.h"
#include "common/assert.h"

#define CC_COST_ENTRIES 1024
#define CC_COST_PROBE 8
#define CC_COST_SAMPLE_NS 25000000ull /* one timed launch per 25 ms per shape */
/* ... and one per 250 ms while the container's bucket holds at least half
 * its capacity: work below its cap is throttled by nothing, so its
 * estimates can lag, and the timings cost it (two event records and the
 * queries after, on ~8 % of a launch-bound GPT-2 generate's launches at 25
 * ms: docs/validation.md, 2026-12-03). Work at its cap drains the bucket
 * and is sampled at the full rate again. */
#ifndef CC_COST_SAMPLE_IDLE_NS
#define CC_COST_SAMPLE_IDLE_NS 250000000ull
#endif
static const uint64_t sample_idle_ns = CC_COST_SAMPLE_IDLE_NS; /* a variable: any value builds warning-free */
#define CC_COST_PAIRS 64
#define CC_COST_UNKNOWN_NS 1000000    /* charge when nothing can be timed: 1 ms */
#define CC_COST_WINDOW 16

struct cost_ent {
    uint64_t tag;     /* hash(key, blocks) | 1; 0 = free (CAS-claimed) */
    int64_t est;      /* ns; -1 = not measured yet */
    uint64_t last_ns; /* last timed launch */
    uint32_t n;       /* timings so far (window index = n % CC_COST_WINDOW); under mu */
    int64_t win[CC_COST_WINDOW];
};
static struct cost_ent table[CC_COST_ENTRIES];

enum pair_state {
    PAIR_FREE = 0,
    PAIR_BEGUN = 1,  /* between cc_cost_begin and cc_cost_end */
    PAIR_QUEUED = 2, /* both events recorded: cc_cost_poll settles it */
};

struct pair {
    CUevent a, b;
    CUcontext ctx;
    int busy;         /* enum pair_state */
    void *key;
    uint64_t blocks;
    int64_t charged;
    cc_compute_dev_t *line;
    int *probe;       /* the device's untimed-shape slot this timing holds, or NULL */
    uint64_t host_a;  /* clock before the start event was recorded */
    uint64_t host_l;  /* clock after it was: the launch call is still to come */
    int64_t host_gap; /* host time from then to the launch's return, when the start event
                       * had completed by then (an idle stream); else 0 (cc_cost_kernel_ns) */
};
static struct pair pairs[CC_COST_PAIRS];
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
int cc_cost_pending;
static int64_t fallback_ns = -1; /* largest estimate seen: for shapes never timed */

/* The driver through the port (port.h): each call is one load of the port
 * pointer and the one indirect call the pointers cached here before cost
 * (the real port's entries are the driver's functions). A driver without
 * an entry fails it (the default's), and so no timing: as a NULL did. */

static uint64_t tag_of(void *key, uint64_t blocks)
{
    uint64_t h = (uint64_t)(uintptr_t)key * 0x9e3779b97f4a7c15ull;
    h ^= blocks + 0x632be59bd9b4e019ull + (h << 6) + (h >> 2);
    h *= 0xbf58476d1ce4e5b9ull;
    return (h ^ (h >> 31)) | 1;
}

static struct cost_ent *lookup(uint64_t tag, int insert)
{
    unsigned i = (unsigned)(tag >> 20) % CC_COST_ENTRIES;
    for (int k = 0; k < CC_COST_PROBE; k++, i = (i + 1) % CC_COST_ENTRIES) {
        struct cost_ent *e = &table[i];
        uint64_t t = __atomic_load_n(&e->tag, __ATOMIC_ACQUIRE);
        if (t == tag) return e;
        if (t == 0 && insert) {
            uint64_t zero = 0;
            /* est is -1 before the tag is published (release). */
            if (__atomic_compare_exchange_n(&e->tag, &zero, tag, 0, __ATOMIC_ACQ_REL,
                                            __ATOMIC_ACQUIRE))
                return e;
            if (zero == tag) return e;
        }
    }
    return NULL;
}

int64_t cc_cost_fallback(void)
{
    int64_t f = __atomic_load_n(&fallback_ns, __ATOMIC_RELAXED);
    return f > 0 ? f : CC_COST_UNKNOWN_NS;
}

int64_t cc_cost_estimate(void *key, uint64_t blocks, int *measure, int below_cap)
{
    uint64_t tag = tag_of(key, blocks);
    struct cost_ent *e = lookup(tag, 1);
    *measure = CC_MEASURE_NO;
    if (!e) return cc_cost_fallback(); /* table full of other shapes */
    int64_t est = __atomic_load_n(&e->est, __ATOMIC_RELAXED);
    uint64_t last = __atomic_load_n(&e->last_ns, __ATOMIC_RELAXED);
    if (est <= 0) { /* never timed (0 is the zeroed table's "unknown") */
        *measure = CC_MEASURE_UNTIMED;
        return 0; /* charged exactly when the timing completes (gate.c bounds these) */
    }
    uint64_t now = cc_mono_ns();
    if (now - last >= (below_cap ? sample_idle_ns : CC_COST_SAMPLE_NS) &&
        __atomic_compare_exchange_n(&e->last_ns, &last, now, 0, __ATOMIC_RELAXED,
                                    __ATOMIC_RELAXED))
        *measure = CC_MEASURE_SAMPLE;
    return est;
}

/* A context's first timing makes the events of CC_COST_BATCH - 1 more
 * pairs too: new shapes come in bursts (a model's first step), and two
 * cuEventCreate calls on each of their first timed launches put 16 slow
 * launches among a thousand, the launch-call p99 of 16 new shapes without a
 * sync (docs/validation.md, 2026-12-03). Made once, on one launch. Pairs
 * that fail keep no events and stay reusable. */
#define CC_COST_BATCH 16
static void premake(const cc_port_t *port, CUcontext ctx)
{
    struct pair *got[CC_COST_BATCH];
    int n = 0;
    pthread_mutex_lock(&mu);
    for (int i = 0; i < CC_COST_PAIRS && n < CC_COST_BATCH - 1; i++)
        if (__atomic_load_n(&pairs[i].busy, __ATOMIC_ACQUIRE) == PAIR_FREE && !pairs[i].a) {
            __atomic_store_n(&pairs[i].busy, PAIR_BEGUN, __ATOMIC_RELAXED);
            got[n++] = &pairs[i];
        }
    pthread_mutex_unlock(&mu);
    for (int k = 0; k < n; k++) {
        struct pair *q = got[k];
        if (port->event_create(&q->a, CU_EVENT_DEFAULT) != CUDA_SUCCESS) q->a = NULL;
        else if (port->event_create(&q->b, CU_EVENT_DEFAULT) != CUDA_SUCCESS) {
            port->event_destroy(q->a);
            q->a = NULL;
        }
        if (q->a) q->ctx = ctx;
        else q->b = NULL;
        /* Release: publishes the events and the context to the next user. */
        __atomic_store_n(&q->busy, PAIR_FREE, __ATOMIC_RELEASE);
    }
}

void *cc_cost_begin(CUstream s, int ptsz, int *probe)
{
    const cc_port_t *port = cc_port();
    /* Asked whatever the capture count says: an event recorded into a
     * capture could never be queried again without invalidating it. */
    if (cc_capture_stream_busy(s, ptsz)) return NULL;
    CUcontext ctx = NULL;
    if (port->ctx_get_current(&ctx) != CUDA_SUCCESS || !ctx) return NULL;
    struct pair *p = NULL;
    pthread_mutex_lock(&mu);
    /* busy is atomic (acquire/release): a pair is freed outside mu, and
     * freeing publishes its events and context to the next user. */
    for (int i = 0; i < CC_COST_PAIRS && !p; i++)
        if (__atomic_load_n(&pairs[i].busy, __ATOMIC_ACQUIRE) == PAIR_FREE && pairs[i].a && pairs[i].ctx == ctx)
            p = &pairs[i];
    for (int i = 0; i < CC_COST_PAIRS && !p; i++)
        if (__atomic_load_n(&pairs[i].busy, __ATOMIC_ACQUIRE) == PAIR_FREE && !pairs[i].a) p = &pairs[i];
    if (p) __atomic_store_n(&p->busy, PAIR_BEGUN, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&mu);
    if (!p) return NULL;
    p->probe = probe;
    if (!p->a) {
        int made = port->event_create(&p->a, CU_EVENT_DEFAULT) == CUDA_SUCCESS;
        if (!made || port->event_create(&p->b, CU_EVENT_DEFAULT) != CUDA_SUCCESS) {
            if (made) port->event_destroy(p->a);
            p->a = p->b = NULL; /* keeps the slot reusable */
            __atomic_store_n(&p->busy, PAIR_FREE, __ATOMIC_RELEASE);
            return NULL;
        }
        p->ctx = ctx;
        premake(port, ctx);
    }
    p->host_a = cc_mono_ns();
    if ((ptsz ? port->event_record_ptsz : port->event_record)(p->a, s) != CUDA_SUCCESS) {
        __atomic_store_n(&p->busy, PAIR_FREE, __ATOMIC_RELEASE);
        return NULL;
    }
    p->host_l = cc_mono_ns();
    return p;
}

/* A launch call (with the gate's work around it) longer than this was not
 * all host time before the kernel: the thread was preempted, or the driver
 * blocked, and the kernel may have run meanwhile. A launch takes 2-5 us on
 * the H200's host. */
#define CC_COST_LAUNCH_QUICK_NS 50000

/* The host time known to have passed before the kernel could start, from
 * recording the start event (a) on: up to the launch's return (r) when the
 * call was quick, else only up to the call (l). Taken to r always, one
 * preemption after the submission made a 1.5 ms kernel's timing read 0.75
 * ms (the cut's floor), the window's minimum kept it for 0.4 s, and a hard
 * 50 % container ran 55-58 % beside another on a loaded host
 * (compute.watcher.cheap, 2026-12-05; compute.cost.preempted). */
static inline int64_t CC_CONTROL_POINT(known_gap)(uint64_t a, uint64_t l, uint64_t r)
{
    if (l < a || r < l) return 0; /* another clock (never: one thread's monotonic reads) */
    return (int64_t)(r - l <= CC_COST_LAUNCH_QUICK_NS ? r - a : l - a);
}

/* The host's time from recording the start event to the launch's return,
 * if the start event has completed by then: the stream was idle, and the
 * events will measure that gap plus the kernel (cc_cost_kernel_ns). If not,
 * work was queued before it, the events will run back to back and measure
 * the kernel alone: 0. The query runs in relaxed capture mode, as the polls
 * do (another thread may be capturing in global mode); without the
 * exchange (a pre-10.1 driver), no query and 0. Three driver calls, on a
 * timed launch only (one per shape per CC_COST_SAMPLE_NS). */
static int64_t start_gap(const cc_port_t *port, const struct pair *p)
{
    int64_t gap = known_gap(p->host_a, p->host_l, cc_mono_ns());
    CUstreamCaptureMode saved;
    if (cc_capture_relaxed_enter(&saved) != 0) return 0;
    int idle = port->event_query(p->a) == CUDA_SUCCESS;
    cc_capture_relaxed_leave(&saved);
    return idle ? gap : 0;
}

/* A timed launch costs est, not a timing inflated by queueing; the
 * difference from what admission charged is settled now. Debt from
 * corrections is bounded at 3 periods of supply, so a burst of inflated
 * first timings cannot stall the container. */
static void settle(cc_compute_dev_t *line, int64_t est, int64_t charged)
{
    if (!line) return;
    int64_t c = est - charged;
    /* share and tokens are read from a shared file: clamped to what the
     * controller and the bucket can hold before any arithmetic. */
    int64_t sh = __atomic_load_n(&line->share, __ATOMIC_RELAXED);
    sh = sh < 0 ? 0 : sh > CC_BUCKET_MAX_COST ? CC_BUCKET_MAX_COST : sh;
    int64_t floor = 3 * sh;
    int64_t cur = __atomic_load_n(&line->tokens, __ATOMIC_RELAXED);
    cur = cur < CC_BUCKET_MIN ? CC_BUCKET_MIN : cur > -CC_BUCKET_MIN ? -CC_BUCKET_MIN : cur;
    int64_t want = c;
    if (c > 0 && cur - c < -floor) c = cur + floor > 0 ? cur + floor : 0;
    cc_bucket_charge(&line->tokens, c);
    cc_gate_note_settled(est, want - c);
}

/* A timing that failed (the driver refused the elapsed time or the query):
 * the launch still ran, so it costs what a shape never timed costs; the
 * shape's window is left alone (a later timing may succeed). Without this
 * a driver that cannot time left untimed shapes charged 0: no cap at all
 * (the fault loop, event_elapsed from its first call on). */
static void CC_CONTROL_POINT(settle_untimed)(const struct pair *p, CUresult r)
{
    cc_log_once(CC_LOG_WARN, "compute cap: a launch could not be timed (driver error %d); such "
                             "launches are charged %lld us each", (int)r,
                (long long)(cc_cost_fallback() / 1000));
    settle(p->line, cc_cost_fallback(), p->charged);
}

static inline int64_t CC_CONTROL_POINT(gap_cut)(int64_t elapsed, int64_t gap)
{
    if (gap <= 0 || elapsed < gap) return elapsed;
    int64_t cut = elapsed - gap;
    return cut > elapsed / 2 ? cut : elapsed / 2;
}

int64_t cc_cost_kernel_ns(int64_t elapsed, int64_t gap) { return gap_cut(elapsed, gap); }

/* Called with mu held (it guards the windows). */
static void charge_shape(void *key, uint64_t blocks, int64_t charged, int64_t ns,
                         cc_compute_dev_t *line)
{
    cc_assert_held(&mu);
    struct cost_ent *e = lookup(tag_of(key, blocks), 0);
    if (ns < 1) ns = 1; /* 0 means "never timed" */
    int64_t est = ns;
    if (e) {
        e->win[e->n++ % CC_COST_WINDOW] = ns;
        uint32_t k = e->n < CC_COST_WINDOW ? e->n : CC_COST_WINDOW;
        for (uint32_t i = 0; i < k; i++)
            if (e->win[i] < est) est = e->win[i];
        __atomic_store_n(&e->est, est, __ATOMIC_RELAXED);
    }
    int64_t f = __atomic_load_n(&fallback_ns, __ATOMIC_RELAXED);
    if (est > f) __atomic_store_n(&fallback_ns, est, __ATOMIC_RELAXED);
    settle(line, est, charged);
}

void cc_cost_end(void *m, CUstream s, int ptsz, void *key, uint64_t blocks, int64_t charged,
                 cc_compute_dev_t *line, int launched)
{
    struct pair *p = m;
    if (!p) return;
    const cc_port_t *port = cc_port();
    p->host_gap = launched ? start_gap(port, p) : 0;
    if (!launched || (ptsz ? port->event_record_ptsz : port->event_record)(p->b, s) != CUDA_SUCCESS) {
        if (p->probe) __atomic_store_n(p->probe, 0, __ATOMIC_RELEASE);
        p->probe = NULL;
        __atomic_store_n(&p->busy, PAIR_FREE, __ATOMIC_RELEASE);
        return;
    }
    p->key = key;
    p->blocks = blocks;
    p->charged = charged;
    p->line = line;
    pthread_mutex_lock(&mu);
    __atomic_store_n(&p->busy, PAIR_QUEUED, __ATOMIC_RELAXED);
    __atomic_add_fetch(&cc_cost_pending, 1, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&mu);
}

/* Where a bounded poll starts (under mu): a launch-path poll asks at most
 * CC_POLL_QUERIES pairs, the next ones the poll after, so every pending
 * timing is reached while no launch pays for all 64. Without the bound, 16
 * timings in flight (16 new shapes, no sync) cost each later launch 16
 * cuEventQuery calls until they completed. */
#define CC_POLL_QUERIES 4
static int poll_cursor;

/* The poll's capture mode: relaxed (1, *saved the thread's own), or not
 * (0); -1: not relaxed while a capture may run, so no poll. */
static int CC_CONTROL_POINT(poll_mode)(CUstreamCaptureMode *saved)
{
    int relaxed = cc_capture_relaxed_enter(saved) == 0;
    return !relaxed && cc_capture_live() ? -1 : relaxed;
}

void cc_cost_poll(int max)
{
    if (!__atomic_load_n(&cc_cost_pending, __ATOMIC_RELAXED)) return;
    /* Launch threads only try: the watcher drains whatever they skip. */
    if (max ? pthread_mutex_trylock(&mu) != 0 : pthread_mutex_lock(&mu) != 0) return;
    /* cuEventQuery is "potentially unsafe": in the thread's default global
     * mode it would invalidate any capture in progress in this process.
     * Relaxed for the poll, as PyTorch's own watchdog does; our
     * events are never recorded into a capture (cc_cost_begin), the one
     * thing relaxed mode still forbids. No exchange (a pre-10.1 driver):
     * no polling while a capture may run. */
    CUstreamCaptureMode saved;
    int relaxed = poll_mode(&saved);
    if (relaxed < 0) {
        pthread_mutex_unlock(&mu);
        return;
    }
    const cc_port_t *port = cc_port();
    int done = 0, asked = 0, start = max ? poll_cursor : 0, i = start;
    for (int k = 0; k < CC_COST_PAIRS && (!max || (done < max && asked < CC_POLL_QUERIES));
         k++, i = (i + 1) % CC_COST_PAIRS) {
        struct pair *p = &pairs[i];
        if (__atomic_load_n(&p->busy, __ATOMIC_RELAXED) != PAIR_QUEUED) continue;
        asked++;
        /* Not ready: later. Another error (a context's sticky error): the
         * pair would never complete, so it is settled untimed now. */
        CUresult r = port->event_query(p->b);
        if (r == CUDA_ERROR_NOT_READY) continue;
        float ms = -1;
        if (r == CUDA_SUCCESS) r = port->event_elapsed(&ms, p->a, p->b);
        __atomic_sub_fetch(&cc_cost_pending, 1, __ATOMIC_RELAXED);
        done++;
        if (r == CUDA_SUCCESS && ms >= 0)
            charge_shape(p->key, p->blocks, p->charged,
                         cc_cost_kernel_ns((int64_t)((double)ms * 1e6), p->host_gap), p->line);
        else
            settle_untimed(p, r);
        /* Release: a launch waiting on the slot then finds the estimate. */
        if (p->probe) __atomic_store_n(p->probe, 0, __ATOMIC_RELEASE);
        p->probe = NULL;
        __atomic_store_n(&p->busy, PAIR_FREE, __ATOMIC_RELEASE);
    }
    if (max) poll_cursor = i;
    /* Only an exchange that happened is undone: restoring after a failed
     * one would leave the thread relaxed for good. */
    if (relaxed) cc_capture_relaxed_leave(&saved);
    pthread_mutex_unlock(&mu);
}

static void fork_child(void)
{
    /* The parent's events belong to its contexts: forget them (not destroy:
     * the child cannot use the parent's CUDA state). Estimates stay valid. */
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    mu = fresh;
    memset(pairs, 0, sizeof pairs);
    cc_cost_pending = 0;
    poll_cursor = 0;
}

void cc_cost_init(void) { cc_fork_child_register(fork_child); }

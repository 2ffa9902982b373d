/* The launch gate: admission. A launch in a capped process: device lookup
 * (the state set up in compute_setup.c), one estimate lookup, one CAS on
 * the shared bucket (whose level, two loads, picks how often a shape is
 * timed); a wait only when the bucket is empty. */
#include "cap/compute/gate.h"

#include <time.h>

#include "cap/cfg.h"
#include "cap/device.h"
#include "cap/compute/bucket.h"
#include "cap/compute/capture.h"
#include "cap/compute/compute.h"
#include "cap/compute/compute_region.h"
#include "cap/port.h"
#include "common/clock.h"
#include "common/controls.h"
#include "cudacap/abi_counters.h"
#include "os/os.h"

/* How long a launch of a never-timed shape waits for the device's pending
 * first timing before it goes ahead charged the fallback. Bounded: a probe
 * queued behind work we cannot see finish (a stream waiting on the host or
 * on another thread's later launch) must never hang a launching thread. */
#define CC_PROBE_WAIT_NS 500000000ull

static struct cc_gate_counts counts;

static inline void count(uint64_t *c, uint64_t n) { __atomic_fetch_add(c, n, __ATOMIC_RELAXED); }

void cc_gate_note_settled(int64_t est, int64_t forgiven)
{
    if (est > 0) count(&counts.settled_ns, (uint64_t)est);
    if (forgiven > 0) count(&counts.forgiven_ns, (uint64_t)forgiven);
}

void cc_gate_counts(struct cc_gate_counts *out)
{
    uint64_t *from = (uint64_t *)&counts, *to = (uint64_t *)out;
    for (size_t i = 0; i < sizeof counts / sizeof(uint64_t); i++) to[i] = __atomic_load_n(&from[i], __ATOMIC_RELAXED);
}

/* A launch of a shape never timed. The first one in flight on the device is
 * the probe: admitted without a charge and timed (charged when its timing
 * completes). While a probe is pending, a later launch of a never-timed
 * shape waits for it, polling the timings, and then is charged the estimate
 * if its shape is the one just timed, or becomes the next probe. So at most
 * one launch per process and device runs uncharged at any time, whatever the
 * queue depth or the number of new shapes: 50 queued 40 ms kernels of one
 * new shape ran the device at 100 % under a 30 % cap when every launch
 * before the first timing was free. The timings are polled before
 * each sleep, so a probe that has already completed (a short kernel on an
 * idle device) costs no sleep at all; sleeps are 10 us doubling to 1 ms, up
 * to CC_PROBE_WAIT_NS; then the fallback charge.
 *
 * Work far below its cap does not wait at all: while the bucket holds at
 * least half its capacity, up to CC_UNTIMED_SLOTS - 1 more such launches
 * run beside the probe, each timed and charged when its timing completes.
 * Work that stays under its cap should not queue behind a pending timing:
 * 16 new shapes of empty kernels launched without a sync spent a p99 of
 * 25-68 us in a launch call on the H200 under a 50 % cap (bare 12-18 us;
 * 16-20 us with 8 slots, where 7 of the 16 still waited: docs/validation.md,
 * 2026-12-02, pacing); 16 slots hold 16 shapes in flight at once. What that
 * lets run uncharged is bounded: 16 launches, only once the container has
 * saved half a bucket (a queue at process start, on an empty bucket, still
 * waits), and only on a stream that has drained (stream_drained): each
 * starts at once, so what runs uncharged is at most one kernel per idle
 * stream while the probe is pending, never a queue. Before the last rule,
 * 30 new shapes of 40 ms queued on one stream after a refill ran 16 of
 * them free: 72 % of the device over the first second at cap 30
 * (compute.deepq.warmnew). The timings then charge them, their debt bounded
 * as every correction's. */
static int *claim_slot(struct cc_compute_device *d, int from, int to)
{
    for (int i = from; i < to; i++) {
        int zero = 0;
        /* Acquire: pairs with the release clear of the timing that held it. */
        if (__atomic_compare_exchange_n(&d->probe[i], &zero, 1, 0, __ATOMIC_ACQUIRE,
                                        __ATOMIC_ACQUIRE))
            return &d->probe[i];
    }
    return NULL;
}

/* A launch of this shape is in flight untimed (its slot held). A stale
 * answer either way is harmless: one launch waits for a poll, or one more
 * runs beside the probe as any new shape may. */
static int CC_CONTROL_POINT(shape_pending)(const struct cc_compute_device *d, void *key, uint64_t blocks)
{
    for (int i = 0; i < CC_UNTIMED_SLOTS; i++)
        if (__atomic_load_n(&d->probe[i], __ATOMIC_RELAXED) &&
            __atomic_load_n(&d->probe_key[i], __ATOMIC_RELAXED) == key &&
            __atomic_load_n(&d->probe_blocks[i], __ATOMIC_RELAXED) == blocks)
            return 1;
    return 0;
}

static int *note_shape(struct cc_compute_device *d, int *slot, void *key, uint64_t blocks)
{
    if (slot) {
        __atomic_store_n(&d->probe_key[slot - d->probe], key, __ATOMIC_RELAXED);
        __atomic_store_n(&d->probe_blocks[slot - d->probe], blocks, __ATOMIC_RELAXED);
    }
    return slot;
}

/* s has no work left: a launch there starts now, not behind a queue of
 * unknown length. Only while no capture is live in the process (a query of
 * the legacy stream beside a blocking capture would invalidate it) and in
 * relaxed capture mode (a capture begun meanwhile by another thread in
 * global mode forbids this thread's unsafe calls otherwise). A failed
 * query: busy (the launch waits for the probe). The slow path only: a
 * probe is pending. Cost: three driver calls (~1 us on the H200). */
static int CC_CONTROL_POINT(stream_drained)(CUstream s, int ptsz)
{
    if (cc_capture_live()) return 0;
    CUstreamCaptureMode saved;
    if (cc_capture_relaxed_enter(&saved) != 0) return 0;
    const cc_port_t *port = cc_port();
    CUresult r = (ptsz ? port->stream_query_ptsz : port->stream_query)(s);
    cc_capture_relaxed_leave(&saved);
    return r == CUDA_SUCCESS;
}

static int CC_CONTROL_POINT(has_headroom)(const struct cc_compute_device *d)
{
    const struct cc_compute_view *v = cc_compute_view(d);
    return __atomic_load_n(&v->line->tokens, __ATOMIC_RELAXED) >= __atomic_load_n(&d->capacity, __ATOMIC_RELAXED) / 2;
}

/* The wait of admit_untimed; *slept and *dup_seen say how it went. */
static int64_t wait_untimed(struct cc_compute_device *d, void *key, uint64_t blocks, CUstream s, int ptsz,
                            int *measure, int **probe, uint64_t t0, int *slept, int *dup_seen)
{
    uint64_t nap = 10000;
    for (;;) {
        /* One launch of a shape in flight untimed at a time: the slots beside
         * the probe are for other new shapes. Without this a deep queue of
         * one new shape after a refill (PyTorch's matmuls after its fill
         * kernels) ran 16 launches uncharged: 70 % busy over its first
         * second at cap 30 (compute.deepq.warm; the H200: 42.7 % over 2 s).
         * On one stream stream_drained now holds that too; across streams
         * (compute.deepq.warmstreams) only this does. */
        int dup = shape_pending(d, key, blocks);
        *dup_seen |= dup;
        if (!dup && (*probe = note_shape(d, claim_slot(d, 0, 1), key, blocks)) != NULL) return 0;
        if (!dup && has_headroom(d) && stream_drained(s, ptsz) &&
            (*probe = note_shape(d, claim_slot(d, 1, CC_UNTIMED_SLOTS), key, blocks)) != NULL)
            return 0;
        if (cc_mono_ns() - t0 > CC_PROBE_WAIT_NS) {
            *measure = CC_MEASURE_SAMPLE;
            return cc_cost_fallback();
        }
        cc_cost_poll(0);
        int64_t est = cc_cost_estimate(key, blocks, measure, 0);
        if (*measure != CC_MEASURE_UNTIMED) return est;
        if (!dup && __atomic_load_n(&d->probe[0], __ATOMIC_ACQUIRE) == 0) continue; /* freed: claim it */
        cc_os_sleep_ns(nap);
        *slept = 1;
        if (nap < 1000000) nap *= 2;
    }
}

static int64_t CC_CONTROL_POINT(admit_untimed)(struct cc_compute_device *d, void *key, uint64_t blocks,
                                               CUstream s, int ptsz, int *measure, int **probe)
{
    uint64_t t0 = cc_mono_ns();
    int slept = 0, dup_seen = 0;
    int64_t est = wait_untimed(d, key, blocks, s, ptsz, measure, probe, t0, &slept, &dup_seen);
    count(&counts.new_shape, 1);
    if (slept) {
        count(&counts.shape_waited, 1);
        if (dup_seen) count(&counts.shape_dup, 1);
        count(&counts.shape_wait_ns, cc_mono_ns() - t0);
    }
    return est;
}

/* Into a capture: nothing runs until the graph is replayed, and the replay
 * is charged (a graph launch, timed like a kernel). One load while no
 * capture exists anywhere in the process. */
static inline int CC_CONTROL_POINT(into_capture)(CUstream s, int ptsz)
{
    return __builtin_expect(cc_capture_live(), 0) && cc_capture_stream_busy(s, ptsz);
}

static inline __attribute__((always_inline)) int gate_begin(struct cc_ticket *t, void *key, uint64_t blocks,
                                                              CUstream s, int ptsz)
{
    t->d = NULL;
    t->m = NULL;
    if (__builtin_expect(
            __atomic_load_n(&cc_compute_mode, __ATOMIC_ACQUIRE) == CC_COMPUTE_UNDECIDED, 0))
        cc_compute_decide_mode();
    if (cc_compute_mode != CC_COMPUTE_CAPPED) return 0;
    /* The stream's device, not the current context's: CUDA runs the launch
     * there (docs/interception.md, "Which device"). The port's load and one
     * indirect call; with one device no driver call. */
    int ordinal = cc_port()->device_of_stream(s, ptsz);
    if (__builtin_expect(ordinal < 0, 0)) ordinal = cc_compute_device_untold();
    struct cc_compute_device *d = cc_compute_dev(ordinal);
    /* Acquire: a device capped again (cap/compute/compute_live.c) publishes
     * its new parameters before its state. */
    if (!d || __atomic_load_n(&d->state, __ATOMIC_ACQUIRE) != CC_DEV_CAPPED) return 0;
    if (into_capture(s, ptsz)) return 0;
    cc_compute_register_here();
    cc_watcher_ensure();
    int measure = CC_MEASURE_NO, *probe = NULL;
    /* The bucket's level picks the sampling interval (cost.c): two loads. */
    int64_t cost = cc_cost_estimate(key, blocks, &measure, has_headroom(d));
    if (measure == CC_MEASURE_UNTIMED) cost = admit_untimed(d, key, blocks, s, ptsz, &measure, &probe);
    /* The bucket this launch uses, loaded once (the rejoin may switch it
     * meanwhile: this launch stays on the one it loaded, refund included).
     * One acquire load, a plain mov on x86: the rejoin's whole cost here. */
    const struct cc_compute_view *v = cc_compute_view(d);
    uint64_t waited = cc_bucket_take(&v->line->tokens, cost, &v->line->throttled, &v->drip);
    /* Throttled time for the node's exporter (cudacap/abi_counters.h): only a
     * launch that waited pays for the add, and only on a shared line. */
    if (waited) {
        count(&counts.token_waited, 1);
        count(&counts.token_wait_ns, waited);
        cc_compute_region_t *region = cc_compute_region();
        if (region && v->idx >= 0 && v->idx < (int)CC_COMPUTE_DEVICES &&
            v->line == &region->dev[v->idx])
            __atomic_fetch_add(&cc_compute_counters(region)->throttled_ns[v->idx], waited,
                               __ATOMIC_RELAXED);
    }
    /* The start event after admission: recorded before it, a timing would
     * include our own wait for tokens (every wait, once tokens drip in:
     * 1.5 ms kernels timed at 5-60 ms on the simulator, the share driven to
     * 4x to compensate). */
    if (measure) {
        count(&counts.timed, 1);
        t->m = cc_cost_begin(s, ptsz, probe);
        if (!t->m) {
            if (probe) __atomic_store_n(probe, 0, __ATOMIC_RELEASE); /* no timing: next probe */
            if (cost == 0) { /* never timed and cannot be: charge the fallback */
                cost = cc_cost_fallback();
                cc_bucket_charge(&v->line->tokens, cost);
            }
        }
    }
    t->d = d;
    t->line = v->line;
    t->key = key;
    t->blocks = blocks;
    t->cost = cost;
    t->s = s;
    t->ptsz = ptsz;
    return 1;
}

static inline __attribute__((always_inline)) void gate_end(struct cc_ticket *t, CUresult r)
{
    int ok = r == CUDA_SUCCESS;
    if (!ok && t->cost) cc_bucket_add(&t->line->tokens, t->cost, INT64_MAX); /* not run: refund */
    if (t->m) cc_cost_end(t->m, t->s, t->ptsz, t->key, t->blocks, t->cost, t->line, ok);
    if (__atomic_load_n(&cc_cost_pending, __ATOMIC_RELAXED)) cc_cost_poll(2);
}

/* What the gate costs the launching thread, measured only with
 * CUDACAP_COUNT_CALLS=1 (cc_cfg, fixed at init): one load and a branch not
 * taken otherwise. Measured, it adds two clock reads (~40 ns) to each call,
 * so the figure is an upper bound of the gate's own cost: what a
 * launch-bound program (GPT-2 generate at batch 1) can lose to the cap when
 * it never waits (docs/compute.md, "What the cap costs below it"). */
int cc_gate_begin(struct cc_ticket *t, void *key, uint64_t blocks, CUstream s, int ptsz)
{
    if (__builtin_expect(!cc_cfg.count_calls, 1)) return gate_begin(t, key, blocks, s, ptsz);
    uint64_t t0 = cc_mono_ns();
    int r = gate_begin(t, key, blocks, s, ptsz);
    count(&counts.host_ns, cc_mono_ns() - t0);
    count(&counts.host_calls, 1);
    return r;
}

void cc_gate_end_slow(struct cc_ticket *t, CUresult r)
{
    if (__builtin_expect(!cc_cfg.count_calls, 1)) {
        gate_end(t, r);
        return;
    }
    uint64_t t0 = cc_mono_ns();
    gate_end(t, r);
    count(&counts.host_ns, cc_mono_ns() - t0);
}

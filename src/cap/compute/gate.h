/* What the launch wrappers (src/hook/launch.c) call around the real launch
 * when the process has a compute cap. */
#ifndef CC_CAP_GATE_H
#define CC_CAP_GATE_H

#include <cuda.h>
#include <stdint.h>

struct cc_compute_device;
struct cc_compute_dev;
struct cc_ticket {
    struct cc_compute_device *d;
    struct cc_compute_dev *line; /* the bucket admission took from (refund, correction) */
    void *m;       /* timing in progress, or NULL */
    void *key;
    uint64_t blocks;
    int64_t cost;
    CUstream s;
    int ptsz;
};

/* Whether this process gates its launches: decided at the first launch
 * (compute_setup.c), then fixed. */
enum cc_compute_mode {
    CC_COMPUTE_UNDECIDED = 0, /* no launch yet */
    CC_COMPUTE_UNCAPPED = 1,  /* no cap anywhere in this process: launches pass straight through */
    CC_COMPUTE_CAPPED = 2,    /* some device is capped */
};
extern enum cc_compute_mode cc_compute_mode; /* release once decided */

/* Admission (may wait). Returns 1 when the launch is gated (call
 * cc_gate_end after the real launch), 0 when it is not. */
int cc_gate_begin(struct cc_ticket *t, void *key, uint64_t blocks, CUstream s, int ptsz);
/* After the real launch: refunds a launch that did not run, ends its
 * timing, completes finished timings. Nothing to do (it ran, untimed, no
 * timing pending): two loads, inline. */
void cc_gate_end_slow(struct cc_ticket *t, CUresult r);
extern int cc_cost_pending; /* queued timings (cost.c; a hint, relaxed) */
static inline void cc_gate_end(struct cc_ticket *t, CUresult r)
{
    if (__builtin_expect(r == CUDA_SUCCESS && !t->m &&
                             !__atomic_load_n(&cc_cost_pending, __ATOMIC_RELAXED), 1))
        return;
    cc_gate_end_slow(t, r);
}

/* Where gated launches waited, counted on the slow paths only (a new
 * shape, a timed launch, a wait), process-wide and relaxed: printed at exit
 * with CUDACAP_COUNT_CALLS=1 (src/hook/stats.c) for real-GPU diagnosis. */
struct cc_gate_counts {
    uint64_t new_shape;     /* launches of a shape never timed */
    uint64_t shape_waited;  /* ... of which waited for a pending timing */
    uint64_t shape_dup;     /* ... of those, because the same shape was in flight untimed */
    uint64_t shape_wait_ns; /* time those waits took */
    uint64_t timed;         /* launches timed (new shapes and samples) */
    uint64_t token_waited;  /* launches that waited for tokens */
    uint64_t token_wait_ns;
    uint64_t settled_ns;    /* device time the settled timings charged (cost.c, settle) */
    uint64_t forgiven_ns;   /* ... and what the debt floor dropped of their corrections */
    uint64_t host_calls;    /* launches through cc_gate_begin (counted with CUDACAP_COUNT_CALLS only) */
    uint64_t host_ns;       /* host time in cc_gate_begin and cc_gate_end_slow, waits and
                             * timing events included, plus two clock reads a call */
};
/* Copied field by field as uint64_t (gate.c): every field must be one. */
_Static_assert(sizeof(struct cc_gate_counts) == 11 * sizeof(uint64_t), "cc_gate_counts holds only uint64_t");
void cc_gate_counts(struct cc_gate_counts *out);
/* A timing settled (cost.c): est charged in all, forgiven dropped by the
 * debt floor. On the timing path only (one per shape per 25 ms). */
void cc_gate_note_settled(int64_t est, int64_t forgiven);

#endif

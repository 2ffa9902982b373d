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

#endif

/* What the launch wrappers (src/hook/launch.c) call around the real launch
 * when the process has a compute cap. */
#ifndef CC_CAP_GATE_H
#define CC_CAP_GATE_H

#include <cuda.h>
#include <stdint.h>

struct cc_cdev;
struct cc_ticket {
    struct cc_cdev *d;
    void *m;       /* timing in progress, or NULL */
    void *key;
    uint64_t blocks;
    int64_t cost;
    CUstream s;
    int ptsz;
};

/* 1 in cc_compute_mode: no cap anywhere in this process. */
extern int cc_compute_mode;

/* Admission (may wait). Returns 1 when the launch is gated (call
 * cc_gate_end after the real launch), 0 when it is not. */
int cc_gate_begin(struct cc_ticket *t, void *key, uint64_t blocks, CUstream s, int ptsz);
void cc_gate_end(struct cc_ticket *t, CUresult r);

#endif

/* Per-process map from what the application holds (a device pointer, a VMM
 * handle, an array, a pool...) to what was counted for it, so that every
 * free gives back exactly what its allocation took. O(1) expected: a fixed
 * table of buckets, each with its own spin lock (thread-safe, no global
 * lock). A fork child starts empty: it owns none of the parent's memory. */
#ifndef CC_ALLOC_TRACK_H
#define CC_ALLOC_TRACK_H

#include <stdint.h>

enum cc_at_kind {
    CC_AT_PTR = 1,   /* linear memory: cuMemAlloc, pitch, managed, async */
    CC_AT_VMM,       /* cuMemCreate handle (refs: create + retains + maps) */
    CC_AT_MAP,       /* cuMemMap range: aux = handle, bytes = size */
    CC_AT_ARRAY,     /* CUarray */
    CC_AT_MIPMAP,    /* CUmipmappedArray */
    CC_AT_POOL,      /* memory pool: bytes = reserved memory we counted */
    CC_AT_GEXEC,     /* graph exec: aux = its struct need (memory_graph.c) */
    CC_AT_GNODE,     /* allocation node: bytes, aux = device (drivers without GetParams) */
};

/* CC_AT_PTR's aux: the allocation was served beyond the cap from host memory
 * (memory_over.c), its bytes counted in the ledger's host dimension. */
#define CC_AT_AUX_HOST 1u
/* CC_AT_PTR's aux: managed memory counted at the cap, aux >> 8 its ordinal
 * (its bytes are kept apart from NVML's figure: cap/device.h, mem_managed). */
#define CC_AT_AUX_MANAGED 2u

struct cc_at_val {
    int h;           /* ledger device handle */
    int32_t refs;
    uint64_t bytes;  /* what was counted */
    uint64_t aux;
};

int cc_at_put(int kind, uint64_t key, const struct cc_at_val *v); /* 0 or -1 (no memory) */
int cc_at_get(int kind, uint64_t key, struct cc_at_val *v);       /* 1 found */
int cc_at_take(int kind, uint64_t key, struct cc_at_val *v);      /* 1 found and removed */
/* Adds delta to refs; when refs reaches 0 removes the entry and returns 1
 * with its value in *v. Returns 0 otherwise, -1 when absent. */
int cc_at_ref(int kind, uint64_t key, int delta, struct cc_at_val *v);
/* Calls fn on every entry of a kind (under each bucket's lock: fn must not
 * call back into the map). */
void cc_at_each(int kind, void (*fn)(uint64_t key, struct cc_at_val *v, void *arg), void *arg);
void cc_at_reset(void); /* fork child */
uint64_t cc_at_count(void);

#endif

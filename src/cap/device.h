/* One record per GPU this process sees (by CUDA ordinal): its identity from
 * the port, the memory cap's binding and the compute cap's setup, under one
 * lock, with one fork reset. The caps' policies fill their parts lazily,
 * each on its first use (cap/mem/bind.c, cap/compute/compute_setup.c), and
 * read them on their hot paths with one acquire load each; the record finds
 * the device once. See docs/design.md, "The device record".
 *
 * Lock (cc_device_lock): held to start a part of a record (identity,
 * memory binding, compute setup) and by the compute cap's container-level
 * setup (its region, rejoin and process-table slot), never on a hot path.
 * Under it the memory binding may wait for the ledger's init lock (at most
 * 3 s) and make one NVML call; neither part calls the other under it, so
 * it never nests. */
#ifndef CC_CAP_DEVICE_H
#define CC_CAP_DEVICE_H

#include <pthread.h>

#include "cap/compute/compute.h"
#include "cap/mem/mem_device.h"
#include "cap/port.h"
#include "cudacap/config.h" /* CC_MAX_DEVICES */

struct cc_devrec {
    /* Identity (cc_device_identify_locked): 1 once the port named the
     * device (uuid, nvml valid; written before the release store). 0: not
     * asked yet, or the port could not tell (asked again next time). */
    int known;
    char uuid[CC_PORT_UUID_LEN];
    nvmlDevice_t nvml; /* NULL without NVML */
    /* The memory cap (cap/mem/bind.c): mem_state is bind.c's, acquire/release;
     * mem is handed out once it says so. */
    int mem_state;
    struct cc_mem_device mem;
    uint8_t mem_stale;          /* overhead grew unmeasured (relaxed): cc_mem_overhead_stale */
    uint64_t mem_measured_ns;   /* last refusal-path measure (relaxed) */
    /* Managed memory of this process counted at the cap (relaxed): NVML's
     * per-process figure leaves it out (the driver places it, often on the
     * host), so the overhead is NVML's figure minus the rest of ours. */
    uint64_t mem_managed;
    /* The compute cap (cap/compute/compute_setup.c): its own state field. */
    struct cc_compute_device compute;
};

/* The record of ordinal, or NULL out of range. Starts nothing: the parts
 * are started by their owners under the lock. */
static inline struct cc_devrec *cc_devrec(int ordinal)
{
    extern struct cc_devrec cc_devrecs[CC_MAX_DEVICES];
    return ordinal >= 0 && ordinal < CC_MAX_DEVICES ? &cc_devrecs[ordinal] : NULL;
}

/* The one lock (above). The first take registers the records' fork reset. */
void cc_device_lock(void);
void cc_device_unlock(void);
pthread_mutex_t *cc_device_mu(void); /* for cc_assert_held */

/* With the lock held: asks the port for the device's identity once (and
 * again while the port cannot tell: before cuInit, a failed query).
 * 1 when known. */
int cc_device_identify_locked(struct cc_devrec *r, int ordinal);

/* The compute part of ordinal's record, set up on first use; NULL out of
 * range. Set up: one acquire load. */
static inline struct cc_compute_device *cc_compute_dev(int ordinal)
{
    struct cc_devrec *r = cc_devrec(ordinal);
    /* Acquire: pairs with the release of the setup's state (fields first). */
    if (__builtin_expect(r && __atomic_load_n(&r->compute.state, __ATOMIC_ACQUIRE) != CC_DEV_UNSET, 1))
        return &r->compute;
    return cc_compute_dev_setup(ordinal);
}

/* The parts' fork resets, run by the record's one reset in the child. */
void cc_mem_bind_fork(struct cc_devrec *r);
void cc_compute_dev_fork(struct cc_compute_device *d);

#endif

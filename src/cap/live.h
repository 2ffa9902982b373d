/* Caps changed while the process runs (docs/configuration.md, "Changing
 * caps while the container runs"): `cudacap set` replaces the container's
 * limits file (a rename) and then bumps the memory region's limits_gen
 * word. A process looks at the file again
 *  - on its allocation path when that word moved (one relaxed load and a
 *    compare when it did not: cc_live_check),
 *  - on a refused allocation, and
 *  - from the compute watcher once a period (one lstat),
 * and reads it only when its identity (inode, size, times) changed. A good
 * file of another generation is applied: the new caps are stored in cc_cfg,
 * memory records take theirs at once (the next reserve sees them), and the
 * compute watcher, the only writer of a capped device's bucket parameters,
 * applies the SM caps at its next cycle (within one period). A bad file
 * keeps the caps as they were, said once per file and counted as a config
 * error (never raised by a file that cannot be trusted). */
#ifndef CC_CAP_LIVE_H
#define CC_CAP_LIVE_H

#include <stdint.h>

#include "cap/memledger.h"

/* The region's limits_gen as this process last looked (relaxed). */
extern uint32_t cc_live_word;

/* Looks at the limits file (above): force reads it whatever its identity.
 * Never blocks on anything but its own short lock. */
void cc_live_poll(int force);
/* The region word of handle h moved: cc_live_poll, then remember it. */
void cc_live_word_moved(int h);
/* How many changes this process applied (relaxed; the watcher compares). */
uint32_t cc_live_changes(void);

/* The allocation path's check on handle h: one call and a compare. */
static inline void cc_live_check(int h)
{
    uint32_t w = cc_ml_limits_gen(h);
    if (__builtin_expect(w != __atomic_load_n(&cc_live_word, __ATOMIC_RELAXED), 0)) cc_live_word_moved(h);
}

/* The parts' appliers (cap/mem/bind.c, cap/compute/compute_live.c). */
void cc_mem_set_limits(int ordinal, uint64_t cap, uint64_t over);
void cc_compute_caps_changed(int ordinal);
/* The watcher, at each cycle: applies the SM caps when cc_live_changes
 * moved since its last call. */
void cc_compute_live_apply(void);

#endif

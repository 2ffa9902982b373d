/* This process's pid as NVML reports it (docs/compute.md, "Host pids"):
 * the one discovery used by the memory cap (overhead measurement) and the
 * compute cap (joining NVML's per-process samples to the container). The
 * policy only: NVML's list is nvml_procs.h, the container's turn around a
 * context creation identity_lock.h, the wrappers ctx_create.c. */
#ifndef CC_HOOK_HOSTPID_H
#define CC_HOOK_HOSTPID_H

#include <stdint.h>

#include "nvml_procs.h" /* the discovery's callers read the list too */

/* The host pid, discovering it when not known yet:
 *  1. NSpid of /proc/self/status with more than one level: its first field
 *     (this /proc shows the host namespace);
 *  2. else NVML's processes on device `ordinal` (those with a context):
 *     our own getpid() when NVML lists it (no pid namespace between us and
 *     NVML), else the one listed pid that no other slot of the container
 *     (memory ledger or compute process table) has claimed.
 * 0 while ambiguous (several unclaimed candidates: processes of the
 * container starting at once, or another container's): the caller retries
 * later, never guesses. Once found it is recorded in the memory ledger's
 * slot and the compute process table, and cached (a load afterwards).
 * Cost while unknown: one /proc read and one NVML call. A fork child starts
 * unknown again (the reset is registered with the first cached value). */
uint32_t cc_hostpid(int ordinal);

/* The cached value, 0 when not discovered yet (a relaxed load). */
uint32_t cc_hostpid_known(void);

/* The first NSpid field when /proc shows more than one level, else 0. */
uint32_t cc_hostpid_nspid(void);

/* Around a context creation: NVML's pids before the real call, and after
 * it the one new pid no other slot of the container claims (recorded as
 * cc_hostpid does). Processes of the container creating contexts at once
 * must take turns (identity_lock.h) for each to see only its own appear. */
struct cc_hostpid_diff {
    int armed, ordinal;
    unsigned n;
    unsigned pid[CC_NVML_PROCS_MAX];
};

/* Worth a diff: the pid unknown, NSpid cannot tell, and some cap set. */
int cc_hostpid_wanted(void);
/* Lists the pids on device ordinal before the creation; c->armed when
 * listed. */
void cc_hostpid_diff_begin(struct cc_hostpid_diff *c, int ordinal);
/* After the creation (created: it succeeded): records the new pid when it
 * is the only one. Nothing when not armed or already known. */
void cc_hostpid_diff_end(const struct cc_hostpid_diff *c, int created);

#endif

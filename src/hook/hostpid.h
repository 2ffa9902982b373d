/* This process's pid as NVML reports it (docs/compute.md, "Host pids"):
 * the one discovery used by the memory cap (overhead measurement) and the
 * compute cap (joining NVML's per-process samples to the container). */
#ifndef CC_HOOK_HOSTPID_H
#define CC_HOOK_HOSTPID_H

#include <stdint.h>

#include "cudacap/nvml.h"

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
 * Cost while unknown: one /proc read and one NVML call. */
uint32_t cc_hostpid(int ordinal);

/* The cached value, 0 when not discovered yet (a relaxed load). */
uint32_t cc_hostpid_known(void);

/* The first NSpid field when /proc shows more than one level, else 0. */
uint32_t cc_hostpid_nspid(void);

/* NVML's processes on device ordinal (nvmlDeviceGetComputeRunningProcesses);
 * *n in/out. 0, or -1 (no NVML, too many, error). */
int cc_nvml_procs(int ordinal, nvmlProcessInfo_t *p, unsigned *n);

/* After fork: the child is another process; forget. */
void cc_hostpid_fork_child(void);

#endif

/* The memory ledger: the container-wide, per-device count of device memory
 * in the memory region (include/cudacap/abi_mem_region.h), and the exact
 * check-and-reserve against a cap. No CUDA here: the hook layer maps CUDA
 * ordinals to ledger devices by UUID and passes the cap in.
 *
 * Degrades, never fails: when the region cannot be opened or mapped, or has
 * no free process slot or device entry, this process counts on a private
 * ledger (same code, anonymous memory) after one warning, so it is still
 * capped, per process. */
#ifndef CC_MEMLEDGER_H
#define CC_MEMLEDGER_H

#include <stdint.h>
#include <sys/types.h>

/* Attaches this process (idempotent; thread-safe; a fork child attaches
 * again on its first use). Returns 1 when the container-wide region is in
 * use, 0 on the private ledger. */
int cc_ml_attach(const char *state_dir);

/* Adds this process's configuration errors (and, refused != 0, one refused
 * process) to the container's counters (cudacap/abi_counters.h), attaching
 * first; nothing on the private ledger. */
void cc_ml_count_config_errors(const char *state_dir, unsigned errors, int refused);

/* The ledger device for a UUID ("GPU-..."), recording limit for display.
 * Returns a handle >= 0 (a full device table gives a private handle after a
 * warning), or -1 when this process has no ledger at all (neither the
 * region nor a private mapping: said as an error, the device runs
 * uncapped). Attaches first if needed. */
int cc_ml_device(const char *state_dir, const char *uuid, uint64_t limit);

/* A new cap for handle h (the limits file changed: cap/live.c): the clamp
 * of other slots' counts, and the limit shown in the region (UINT64_MAX:
 * removed, shown as none). */
void cc_ml_set_cap(int h, uint64_t cap);

/* The limits generation word (abi_mem_region.h, limits_gen) of the region
 * handle h counts in; 0 for a private ledger. Two loads. */
uint32_t cc_ml_limits_gen(int h);

/* Reserves bytes on device handle h if the container's use stays <= cap
 * (cap 0: no cap, always succeeds). Exact across processes (see the proof
 * in cap/mem/ledger_reserve.c). Returns 0, or -1 with nothing changed.
 * Cost when it fits: one atomic add and a scan of the slots in use (8 bytes
 * each). */
int cc_ml_reserve(int h, uint64_t bytes, uint64_t cap);

/* Oversubscription (docs/memory.md): bytes beyond the device cap, placed in
 * host memory, counted container-wide per device in a second dimension of
 * the slots with the same exact check, against over (0: none, refused).
 * Reclaimed with the slot like device bytes. */
int cc_ml_host_reserve(int h, uint64_t bytes, uint64_t over);
void cc_ml_host_release(int h, uint64_t bytes);
uint64_t cc_ml_host_used(int h); /* the container's */
uint64_t cc_ml_host_own(int h);  /* this process's */
void cc_ml_set_host_limit(int h, uint64_t over); /* for display (cudacap status) */

/* Counts a refusal the program saw (cudacap_mem_refusals_total). */
void cc_ml_count_refusal(int h);

/* Adds bytes without a check (memory the driver already handed out that we
 * could not check first) / gives back bytes reserved before. */
void cc_ml_charge(int h, uint64_t bytes);
void cc_ml_release(int h, uint64_t bytes);

/* Context admission: reserves bytes as overhead with the same exact check
 * (0, or -1 with nothing changed); the unreserve gives a failed creation's
 * bytes back. Settle with cc_ml_set_overhead once measured. */
int cc_ml_reserve_overhead(int h, uint64_t bytes, uint64_t cap);
void cc_ml_unreserve_overhead(int h, uint64_t bytes);
/* The size of one context on device h as measured by some process of the
 * container (0: none yet; clamped to the cap), and its publication. */
uint64_t cc_ml_ctx_size(int h);
void cc_ml_set_ctx_size(int h, uint64_t bytes);

/* This process's overhead (context, libraries) on device h, absolute. */
void cc_ml_set_overhead(int h, uint64_t bytes);
uint64_t cc_ml_overhead(int h);

/* Container's use of device h (all live slots, allocations + overheads),
 * and this process's allocations (without overhead). */
uint64_t cc_ml_used(int h);
uint64_t cc_ml_own(int h);

/* Reclaims the slots of dead processes. Returns how many were reclaimed. */
int cc_ml_sweep(void);

/* 1 when handle h counts container-wide, 0 when private. */
int cc_ml_shared(int h);

/* This process's NVML pid, recorded in its slot for joins with NVML. */
void cc_ml_set_host_pid(uint32_t host_pid);
uint32_t cc_ml_host_pid(void);
/* Whether any live slot other than ours records this host pid. */
int cc_ml_host_pid_taken(uint32_t host_pid);
/* The host pid from the NSpid line of /proc/self/status when this process
 * sees more than one namespace level (outermost = host), else 0. */
uint32_t cc_ml_nspid_host(void);

/* Liveness of a container pid with the start time recorded for it (0:
 * unknown). Zombies count as dead: the driver has freed their memory. */
int cc_ml_pid_alive(uint32_t pid, uint64_t start_time);
uint64_t cc_ml_start_time(pid_t pid);

/* Fork child: forget the parent's slot and private counts. */
void cc_ml_fork_child(void);

#endif

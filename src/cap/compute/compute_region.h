/* Opening the compute region and claiming its slots: device lines by UUID,
 * process slots by process key (region/proc_key.h). No CUDA here, so
 * multi-process tests link it from cudacap_core. */
#ifndef CC_CAP_COMPUTE_REGION_H
#define CC_CAP_COMPUTE_REGION_H

#include <stdint.h>
#include <sys/stat.h>

#include "cudacap/abi_compute_region.h"
#include "region/proc_key.h"

/* Maps DIR/compute.region (created, validated, rebuilt in place by
 * cc_region_open) and takes this process's key there into k (k->fd: the
 * descriptor, kept open for the key's liveness byte; k->key 0 when no key
 * could be taken). NULL after one warning. */
cc_compute_region_t *cc_compute_region_open(const char *dir, struct cc_pkey *k);
/* The same, for the rejoin's retries: no warning, and NULL at once when
 * another process holds the init lock (the next retry will do). */
cc_compute_region_t *cc_compute_region_try_open(const char *dir, struct cc_pkey *k);
/* A fork child: its own descriptor of the file it maps (identity was, from
 * the parent's descriptor) and its own key. 0 (k->key 0 if none could be
 * taken), or -1 when the path names another file or cannot be opened. */
int cc_compute_rekey(const char *dir, struct cc_pkey *k, const struct stat *was);

/* The line of the device with this UUID, claiming a free one (CAS) when no
 * line has it; a new line starts with tokens and share = nominal, published
 * before the claim is. Returns the index or -1 (table full, or bad uuid). */
int cc_compute_claim_device(cc_compute_region_t *r, const char *uuid, int64_t nominal,
                            uint32_t cap_pm);

/* Records this process (its key me, host pid as NVML reports it) in the
 * process table; a slot whose process is gone (its key's byte free) is
 * reused. Returns the slot, or -1 when the table is full or me has no key. */
int cc_compute_register_proc(cc_compute_region_t *r, const struct cc_pkey *me, uint32_t host_pid);

/* 1 when host_pid belongs to a process of this container. */
int cc_compute_is_member(const cc_compute_region_t *r, uint32_t host_pid);

/* 1 when a live slot other than me's has claimed host_pid (host pid
 * discovery: a pid another process of the container holds is not ours). */
int cc_compute_host_pid_taken(const cc_compute_region_t *r, uint32_t host_pid, const struct cc_pkey *me);

/* The sampling owner of device line `line`, after a sample: each process's
 * utilization from the n (host pid, permille) pairs; a process with a known
 * host pid and no pair gets 0, one with none CC_COMPUTE_UTIL_UNKNOWN.
 * Cost: a scan of the table (256 slots) times n for the live ones. */
void cc_compute_publish_procs(cc_compute_region_t *r, unsigned line, const uint32_t *host_pids,
                              const uint16_t *util_pm, unsigned n);
/* The owner says who it is (display: `cudacap status`). */
void cc_compute_publish_owner(cc_compute_region_t *r, unsigned line, uint32_t pid,
                              uint32_t host_pid);

#endif

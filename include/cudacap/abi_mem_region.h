/* The memory region: "memory.region" in the container's state folder, shared
 * by every capped process of the container (docs/memory.md, "Shared state").
 *
 * ABI: fixed-width fields, explicit padding, offsets pinned below. Shared
 * fields are accessed only with __atomic_* builtins (order written at each
 * site); no volatile, no _Atomic. Anything after the frozen header may
 * change only together with CC_MEM_LAYOUT; the FILE SIZE never changes.
 *
 * Accounting lives only in the per-process slots: the container's use of a
 * device is the sum over slots of used[d] + overhead[d]. There is no separate
 * running total that a killed process could leave out of step. */
#ifndef CUDACAP_MEM_REGION_H
#define CUDACAP_MEM_REGION_H

#include <stddef.h>
#include <stdint.h>

#include "cudacap/abi_region.h"

#define CC_MEM_REGION_FILE "memory.region"
#define CC_MEM_MAGIC 0x4d454d43u /* "CMEM" little endian */
#define CC_MEM_LAYOUT 3u /* 2: generation; 3: owners are process keys (CC_KEY_PIDS) */
/* PERMANENT: the file size of every layout, past and future (1 MiB). */
#define CC_MEM_FILE_SIZE (1u << 20)
#define CC_MEM_DEVS 16   /* == CC_MAX_DEVICES */
#define CC_MEM_SLOTS 512 /* processes of one container with a slot at once */
#define CC_MEM_UUID_LEN 48

/* Slot owner word: 0 free; a process key (< CC_KEY_END, abi_region.h: the
 * owner's pid, or a probed key when another pid namespace's process has that
 * pid): owned by that process; CC_MEM_REAPING | key: being cleaned by the
 * sweeper with that key, or being filled by its new owner with that key
 * (claim, re-publication). Counted in the sum either way. */
#define CC_MEM_REAPING 0x80000000u

/* Liveness without the region's content: every attached process holds an
 * OFD write lock (classic POSIX on old kernels) on the one byte at
 * CC_MEM_LIVE_BASE + its key of memory.region, for as long as it is
 * attached (the kernel drops it at exit, kill -9 included). Beyond the end
 * of the file: such locks need no data. A slot counts as live only while
 * its owner holds that byte; a rebuilder finds the live processes there
 * (docs/memory.md, "Rebuilds"). Keys span [1, CC_KEY_END). */
#define CC_MEM_LIVE_BASE ((uint64_t)CC_MEM_FILE_SIZE)
_Static_assert(CC_KEY_END <= CC_MEM_REAPING, "keys stay under the reaping bit");

typedef struct cc_mem_dev {
    uint64_t key;                 /* 0 free; else hash(uuid)|1, claimed by CAS */
    uint64_t limit;               /* display only (cudacap status); never read as a cap */
    char uuid[CC_MEM_UUID_LEN];   /* display only; written after the key claim */
} cc_mem_dev_t;

typedef struct cc_mem_proc {
    uint32_t owner;               /* see CC_MEM_REAPING */
    uint32_t host_pid;            /* NVML's pid of this process, 0 unknown */
    uint64_t start_time;          /* /proc/<pid>/stat field 22, 0 unknown */
} cc_mem_proc_t;

typedef struct cc_mem_region {
    cc_region_hdr_t hdr;          /* frozen: offsets 0..15 */
    uint32_t slots_hw;            /* slots ever claimed (+1 of the highest index); display
                                   * only: the sum scans every slot */
    uint32_t generation;          /* new nonzero value at every (re)build; a futex word:
                                   * live processes wait on it and re-publish */
    /* Bumped by `cudacap set` after it replaced the limits file: processes
     * compare it on their allocation path (one relaxed load) and read the
     * file again when it moved. Any value may be written by anyone: it only
     * makes a process look at the file, which alone says the caps.
     * Appended in layout 3 without a bump (old files hold 0 here). */
    uint32_t limits_gen;
    uint32_t pad0;
    uint64_t pad1[4];             /* the header and hw fill one cache line */
    cc_mem_dev_t dev[CC_MEM_DEVS];
    cc_mem_proc_t proc[CC_MEM_SLOTS];
    /* Per device, per slot, contiguous so that summing a device over the
     * live slots reads consecutive cache lines. */
    uint64_t used[CC_MEM_DEVS][CC_MEM_SLOTS];     /* bytes this process allocated */
    uint64_t overhead[CC_MEM_DEVS][CC_MEM_SLOTS]; /* context/library bytes */
    /* Appended in layout 2 without a bump: old files hold 0 there, which
     * reads "not learned yet" (and an older library ignores it). */
    uint64_t ctx_size[CC_MEM_DEVS]; /* one context's bytes, as last measured; 0 unknown */
    /* Appended in layout 3 without a bump, as ctx_size was: per device, per
     * slot, the bytes this process allocated beyond the device cap and
     * placed in host memory (oversubscription, docs/memory.md). Old files
     * hold 0 there; a library that predates it never oversubscribes. Counted
     * only while the slot's owner word is set, like used. */
    uint64_t host_used[CC_MEM_DEVS][CC_MEM_SLOTS];
    uint64_t host_limit[CC_MEM_DEVS]; /* display only (cudacap status): the oversubscription */
} cc_mem_region_t;

_Static_assert(offsetof(cc_mem_region_t, hdr) == 0, "memory region: header at 0");
_Static_assert(offsetof(cc_mem_region_t, slots_hw) == 16, "memory region: slots_hw");
_Static_assert(offsetof(cc_mem_region_t, generation) == 20, "memory region: generation");
_Static_assert(offsetof(cc_mem_region_t, limits_gen) == 24, "memory region: limits_gen");
_Static_assert(offsetof(cc_mem_region_t, dev) == 64, "memory region: dev");
_Static_assert(sizeof(cc_mem_dev_t) == 64, "memory region: device entry is one cache line");
_Static_assert(offsetof(cc_mem_dev_t, key) == 0 && offsetof(cc_mem_dev_t, limit) == 8 &&
                   offsetof(cc_mem_dev_t, uuid) == 16, "memory region: device entry fields");
_Static_assert(sizeof(cc_mem_proc_t) == 16, "memory region: process entry");
_Static_assert(offsetof(cc_mem_region_t, proc) == 64 + 64 * CC_MEM_DEVS, "memory region: proc");
_Static_assert(offsetof(cc_mem_region_t, used) == 64 + 64 * CC_MEM_DEVS + 16 * CC_MEM_SLOTS,
               "memory region: used");
_Static_assert(offsetof(cc_mem_region_t, used) % 64 == 0, "memory region: used is line aligned");
_Static_assert(offsetof(cc_mem_region_t, overhead) ==
                   offsetof(cc_mem_region_t, used) + 8 * CC_MEM_DEVS * CC_MEM_SLOTS,
               "memory region: overhead");
_Static_assert(offsetof(cc_mem_region_t, ctx_size) ==
                   offsetof(cc_mem_region_t, overhead) + 8 * CC_MEM_DEVS * CC_MEM_SLOTS,
               "memory region: ctx_size");
_Static_assert(offsetof(cc_mem_region_t, host_used) ==
                   offsetof(cc_mem_region_t, ctx_size) + 8 * CC_MEM_DEVS,
               "memory region: host_used");
_Static_assert(offsetof(cc_mem_region_t, host_used) % 64 == 0, "memory region: host_used is line aligned");
_Static_assert(offsetof(cc_mem_region_t, host_limit) ==
                   offsetof(cc_mem_region_t, host_used) + 8 * CC_MEM_DEVS * CC_MEM_SLOTS,
               "memory region: host_limit");
_Static_assert(sizeof(cc_mem_region_t) <= CC_MEM_FILE_SIZE, "memory region fits its file");

#endif

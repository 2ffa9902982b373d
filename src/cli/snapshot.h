/* The reader of a container's state folder for status, top and metrics.
 * Read-only: reads private copies of the region files with cc_region_peek
 * (no create, no lock, no rebuild, no mapping: a truncation cannot raise
 * SIGBUS), never takes a lock any process of the container waits on, and
 * shows a region that is absent, of another layout, truncated, rebuilt while
 * it was read, not a plain file or full of garbage as such, never as
 * figures. Counts are also clamped, strings bounded. */
#ifndef CC_CLI_SNAPSHOT_H
#define CC_CLI_SNAPSHOT_H

#include <stdint.h>

#include "cudacap/abi_compute_region.h"
#include "cudacap/abi_mem_region.h"

/* A region: absent; ok; no data (another size or layout, being built or
 * rebuilt); truncated; corrupt (a valid header over fields the library
 * cannot have written); unusable (not a regular file, hard-linked,
 * unreadable). */
enum { SNAP_ABSENT = 0, SNAP_OK, SNAP_NODATA, SNAP_TRUNCATED, SNAP_CORRUPT, SNAP_UNUSABLE };
enum { OWNER_UNKNOWN = 0, OWNER_NONE = 1, OWNER_HELD = 2 };

#define SNAP_DEVS 16
#define SNAP_PROCS (CC_MEM_SLOTS + CC_COMPUTE_PROCS)

struct snap_dev {
    char uuid[64];
    int index;             /* NVML index (the device's rank by PCI bus id among the
                            * driver's GPUs), else table slot */
    int minor;             /* the driver's minor number (/dev/nvidiaN); -1 unknown */
    int has_mem;           /* the memory region knows the device */
    uint64_t mem_used;     /* live processes: allocations + overhead */
    uint64_t mem_limit;    /* 0: not capped */
    uint64_t host_used;    /* live processes: oversubscribed bytes in host memory */
    uint64_t host_limit;   /* the oversubscription allowed; 0: none */
    int has_sm;            /* the compute region knows the device */
    uint32_t sm_limit_pm;  /* 0: not capped (the hard cap of an elastic one) */
    uint32_t sm_soft_pm;   /* the elastic limit; 0: not elastic */
    uint32_t sm_target_pm; /* an elastic container's current target (hard..soft) */
    int borrowing;         /* elastic: the last sample above the hard cap */
    uint64_t borrowed_ns;  /* elastic: device time used above the hard cap, ns */
    int has_sample;        /* a sample was published */
    uint32_t util_pm;      /* the container's utilization (permille) */
    uint32_t dev_util_pm;  /* everyone's, as the sampler saw the device */
    uint64_t sample_age_ns;
    uint32_t sample_interval_us; /* the sampler's measured cadence; 0 unknown */
    int owner;             /* OWNER_* */
    long owner_pid;        /* 0: not found */
    int owner_from_region; /* owner_pid published by the owner (else /proc fallback) */
    uint32_t owner_host_pid; /* the owner's pid as NVML reports it; 0 unknown */
    int nproc;             /* live processes with memory on the device */
    uint64_t refusals;     /* allocations refused at the cap (counter, memory region) */
    uint64_t throttled_ns; /* launches' waits for tokens (counter, compute region) */
    int idle;              /* a compute line, but no live process: no current utilization */
};

struct snap_proc {
    uint32_t pid;          /* in the container */
    uint32_t host_pid;     /* as NVML reports it; 0 unknown */
    int alive;
    int has_mem;
    uint64_t mem_total;
    uint64_t mem[SNAP_DEVS]; /* by snap_dev index */
    uint64_t host[SNAP_DEVS]; /* oversubscribed bytes in host memory, by snap_dev index */
    int has_util[SNAP_DEVS]; /* the sampler measured this process on that device */
    uint32_t util_pm[SNAP_DEVS];
};

struct snap {
    char name[256];
    char dir[1024];
    int mem_state, sm_state; /* SNAP_* */
    char mem_why[1280], sm_why[1280]; /* what was wrong, naming the file; "" when ok or absent */
    int ndev;
    struct snap_dev dev[SNAP_DEVS];
    int nproc;             /* live + dead slots found */
    int nalive;
    struct snap_proc proc[SNAP_PROCS];
    /* Configuration errors its processes found (counter, memory region),
     * and how many processes were refused the GPU for them. */
    uint64_t config_errors, config_refused;
    /* A configuration problem the node can see itself (the limits file);
     * "" none. */
    char config_why[1400];
};

/* Where the driver lists its GPUs (/proc/driver/nvidia/gpus); tests point
 * CUDACAP_NVIDIA_PROC at a fake one. */
const char *snap_nvidia_proc(void);

/* Reads the state folder dir (name: the container's name). Returns 0; a
 * folder with neither region gives mem_state = sm_state = SNAP_ABSENT. */
int snap_read(const char *dir, const char *name, struct snap *s);

/* Containers under root, one folder each, sorted by name. Returns the count
 * (at most max) with names allocated into names[], or -1 when root cannot
 * be read (errno). */
int snap_list(const char *root, char **names, int max);

/* Snapshots of every container under root (at most SNAP_MAX_CONTAINERS):
 * *out is allocated (free with snap_release). Returns the count, or -1 when
 * root cannot be read (errno) or memory runs out. */
#define SNAP_MAX_CONTAINERS 1024
int snap_collect(const char *root, struct snap ***out);
void snap_release(struct snap **s, int n);

/* Lock state (OWNER_*) of bytes start..start+len of the file open at fd
 * (len 0: to its end), without taking anything. */
int snap_lock_probe(int fd, long start, long len);

/* Liveness of a slot's process from the node side: pid or host pid alive
 * with the recorded start time (0: unknown). */
int snap_pid_alive(uint32_t pid, uint32_t host_pid, uint64_t start_time);

#endif

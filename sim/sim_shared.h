/* Cross-process state of the simulator: one file (CUDACAP_SIM_DIR/state),
 * mmap'ed MAP_SHARED by libcuda.so.1 and libnvidia-ml.so.1 of every process.
 * All fields are read and written under the robust process-shared mutex. */
#ifndef CUDACAP_SIM_SHARED_H
#define CUDACAP_SIM_SHARED_H

#include <pthread.h>
#include <stdint.h>

#define SIM_MAX_DEV 16
#define SIM_MAX_PROC 256
#define SIM_RING 16384
#define SIM_MAGIC 0x43534d31u /* "CSM1" */
#define SIM_LAYOUT 6u

struct sim_ival {             /* one busy interval of the device timeline */
    uint64_t start_ns;        /* CLOCK_MONOTONIC */
    uint64_t end_ns;
    uint32_t slot;            /* process slot that launched it */
    uint32_t nvml_pid;        /* pid as NVML reports it */
};

struct sim_dev {
    uint64_t total;           /* bytes */
    uint32_t sms;
    uint32_t pad;
    uint64_t busy_until;      /* end of the last interval on the timeline */
    uint64_t ring_head;       /* intervals ever appended (ring index = head % SIM_RING) */
    uint64_t one_end;         /* CUDACAP_SIM_PROC_SAMPLE_ONE: the newest period whose one pid is decided */
    uint32_t one_pid;         /* ... and that pid (sticky mode: stays named while busy) */
    uint32_t one_pad;
    uint64_t peak_used;       /* the most device memory ever in use at once (cuSimTestPeakMem) */
    struct sim_ival ring[SIM_RING];
};

struct sim_proc {
    uint32_t in_use;
    uint32_t pid;             /* getpid(), for liveness */
    uint32_t nvml_pid;        /* host pid + CUDACAP_SIM_PID_OFFSET */
    uint32_t pidns;           /* pid namespace inode (low 32 bits): pid is a pid there */
    uint64_t start_time;      /* /proc/<pid>/stat field 22 */
    uint64_t mem[SIM_MAX_DEV];/* device bytes incl. context memory */
    uint32_t ctx[SIM_MAX_DEV];/* live contexts per device */
};

struct sim_shared {
    uint32_t magic;
    uint32_t layout;
    uint32_t ndev;
    uint32_t pad;
    pthread_mutex_t lock;
    struct sim_proc procs[SIM_MAX_PROC];
    struct sim_dev dev[SIM_MAX_DEV];
};

/* Configuration read from the environment of this process. */
struct sim_config {
    uint32_t ndev;
    uint32_t sms;
    uint64_t mem;
    uint64_t ctx_mem;
    uint64_t ctx_mem_dev[SIM_MAX_DEV];
    uint64_t module_mem;      /* CUDACAP_SIM_MODULE_MEM: device memory of each module load */ /* CUDACAP_SIM_CTX_MEM_<i>, default ctx_mem */
    uint64_t util_window_ns;
    int64_t pid_offset;
    uint64_t proc_sample_us;  /* CUDACAP_SIM_PROC_SAMPLE_MS; 0: samples cover [lastSeen, now] */
    int proc_sample_one;      /* CUDACAP_SIM_PROC_SAMPLE_ONE: one pid per periodic sample (2: sticky) */
    uint64_t nvml_lag_us;     /* CUDACAP_SIM_NVML_LAG_MS: a period's samples appear this long after it ends */
    uint64_t ctx_create_ns;   /* CUDACAP_SIM_CTX_CREATE_MS: primary context creation time */
    uint32_t slowdown_pct;    /* CUDACAP_SIM_SLOWDOWN_PCT: a kernel's extra time at a busy device */
    uint64_t launch_stall_ns; /* CUDACAP_SIM_LAUNCH_STALL_US: a launch returns this long after its kernel is queued */
    uint32_t launch_stall_every; /* CUDACAP_SIM_LAUNCH_STALL_EVERY: ... on every n-th launch of the process (1: each) */
    int no_stream_device;     /* CUDACAP_SIM_NO_STREAM_DEVICE=1: cuStreamGetDevice unsupported (a pre-12.8 driver) */
    int no_concurrent_managed;/* CUDACAP_SIM_NO_CONCURRENT_MANAGED=1: the devices lack concurrent managed access */
};

const struct sim_config *sim_config(void);
void sim_config_reset(void);
uint64_t sim_env_size(const char *name, uint64_t dflt); /* cc_parse_size, or dflt */
uint64_t sim_now_ns(void);              /* CLOCK_MONOTONIC */
uint64_t sim_realtime_us(void);
/* Both clocks at one instant (NVML's realtime periods on the monotonic
 * timeline). */
void sim_clock_pair(uint64_t *mono_ns, uint64_t *real_us);
/* Periodic samples (CUDACAP_SIM_PROC_SAMPLE_MS = P): the end of the newest
 * period whose samples NVML shows at now_us, the lag taken off. */
uint64_t sim_nvml_newest_end(uint64_t now_us, uint64_t P);
void sim_sleep_until(uint64_t mono_ns);

/* Maps the state file (once per process); NULL on failure. */
struct sim_shared *sim_shm(void);
void sim_lock(struct sim_shared *s);
/* Test hook, exported: ns this process waited over 1 ms for the lock. */
uint64_t cuSimTestLockStallNs(void);
int cuSimTestPeakMem(int dev, unsigned long long *bytes);
/* Test hook, exported: busy ns of a device in [from, to) (timeline.c). */
uint64_t cuSimTestBusyNs(uint32_t dev, uint64_t from, uint64_t to);
void sim_unlock(struct sim_shared *s);
uint32_t sim_ndev(void);                /* device count (from the state file) */

/* Process slots. sim_my_slot registers this process (lock held). */
int sim_my_slot_locked(struct sim_shared *s);
void sim_sweep_locked(struct sim_shared *s);   /* frees slots of dead processes */
uint64_t sim_used_locked(struct sim_shared *s, uint32_t dev);
void sim_release_my_slot(void);

/* Memory accounting for this process. charge returns 0 or -1 (no memory). */
int sim_charge(uint32_t dev, uint64_t bytes);
void sim_uncharge(uint32_t dev, uint64_t bytes);
void sim_ctx_count(uint32_t dev, int delta);
void sim_mem_info(uint32_t dev, uint64_t *free_b, uint64_t *total_b);

/* Timeline (timeline.c). */
uint64_t sim_timeline_append(uint32_t dev, uint64_t not_before, uint64_t dur_ns);
uint64_t sim_busy_locked(struct sim_shared *s, uint32_t dev, uint64_t from, uint64_t to,
                         int64_t only_pid);

#endif

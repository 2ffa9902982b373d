#ifndef CC_CAP_NVML_SAMPLE_H
#define CC_CAP_NVML_SAMPLE_H
/* The watcher's NVML sampling (nvml_sample.c). */
#include <stddef.h>
#include <stdint.h>

#include "cap/compute/compute.h"

/* Opens NVML through the port and notes whether per-process utilization can
 * be read (without it, no samples: the cap runs on its cost model alone). */
void cc_watch_nvml_open(void);

/* One NVML poll of device d: the container's utilization (*user_pm) and
 * everyone's (*sys_pm), permille. 1: a sample; 0: none this time. With
 * procs (the sampler of a shared line), each container process's share goes
 * into its slot of the process table (cudacap status). */
int cc_watch_sample(struct cc_compute_device *d, const struct cc_compute_view *v, uint32_t *user_pm,
                    uint32_t *sys_pm, int procs);

/* Where the watcher's cycles went, process-wide and relaxed: printed at
 * exit with CUDACAP_COUNT_CALLS=1 (src/hook/stats.c), to tell on a machine
 * why a container sampled NVML less often than every cycle. */
struct cc_watch_counts {
    uint64_t cycles;     /* watcher cycles, every device */
    uint64_t owner;      /* ... in which this process owned the sampling */
    uint64_t quiet;      /* ... that skipped the sample: a full bucket, nobody waiting */
    uint64_t cheap;      /* device-wide reads (the cheap path) */
    uint64_t cheap_same; /* cheap path: the period was read already */
    uint64_t not_due;    /* per-process polls skipped: NVML's next sample not due */
    uint64_t polls;      /* per-process queries */
    uint64_t empty;      /* ... that found no sample */
    uint64_t period_us;  /* the period learned last (nvml_period_us), us */
    uint64_t lag_us;     /* the publication lag learned last, us */
    uint64_t cpu_us;     /* the watcher thread's CPU time, us (counted with CUDACAP_COUNT_CALLS only) */
};
_Static_assert(sizeof(struct cc_watch_counts) == 11 * sizeof(uint64_t), "cc_watch_counts holds only uint64_t");
void cc_watch_counts(struct cc_watch_counts *out);
/* Counts one event (a field of cc_watch_counts, by offset). */
void cc_watch_count(size_t field);
#define CC_WATCH_COUNT(f) cc_watch_count(offsetof(struct cc_watch_counts, f))
/* The watcher thread's CPU time so far (cpu_us), set once a cycle. */
void cc_watch_note_cpu(uint64_t ns);

#endif

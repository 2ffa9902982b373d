/* cudacap configuration: what the control plane sets in the environment,
 * parsed once per process. The variables are the rows of src/common/options.c
 * (docs/configuration.md's table is printed from it). */
#ifndef CUDACAP_CONFIG_H
#define CUDACAP_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#define CC_MAX_DEVICES 16
/* CUDACAP_SM_BURST_MS: its bounds, in ms of device time. */
#define CC_SM_BURST_MIN_MS 1u
#define CC_SM_BURST_MAX_MS 1000u
#define CC_PATH_MAX 512

typedef enum { CC_CTRL_AUTO = 0, CC_CTRL_DELTA = 1, CC_CTRL_AIMD = 2 } cc_controller_t;

typedef struct cc_config {
    /* Memory cap in bytes per visible device index; 0 = no cap. */
    uint64_t mem_limit[CC_MAX_DEVICES];
    /* SM utilization cap in percent per visible device index; 0 = no cap
     * (100 is stored as 0: a cap of 100 % caps nothing). */
    uint32_t sm_limit[CC_MAX_DEVICES];
    /* Elastic (soft) SM limit in percent per device: the container may use
     * idle device time up to it while nobody else wants it, and keeps its
     * hard sm_limit as a guarantee (docs/compute.md, "Elastic caps").
     * 0 = not elastic; set only where sm_limit is set and soft > hard
     * (soft == hard is a hard cap; 100 = all idle time). */
    uint32_t sm_soft_limit[CC_MAX_DEVICES];
    /* CUDACAP_SM_BURST_MS: the most device time (ms) a capped container may
     * run ahead of its share, and the largest lump; 0 = the default
     * (docs/compute.md, "Pacing"). */
    uint32_t sm_burst_ms;
    cc_controller_t controller;
    /* 0: every process gets its own compute bucket (CUDACAP_SHARED_BUCKET=0,
     * a baseline for comparisons); 1 (default): one bucket per container. */
    int shared_bucket;
    /* Context/library memory charged per process and device when NVML
     * cannot measure it (CUDACAP_CTX_OVERHEAD; default 0). */
    uint64_t ctx_overhead;
    /* CUDACAP_COUNT_CALLS: count calls through each wrapper, print at exit. */
    int count_calls;
    /* The container's shared state folder; "" when the configured path is
     * unusable (too long): every user then keeps per-process state, never
     * the default folder, which may be another container's. */
    char state_dir[CC_PATH_MAX];
    /* Number of values that did not parse (each reported on stderr). */
    int errors;
    /* CUDACAP_STRICT: errors refuse the GPU (cuInit fails) instead of
     * leaving the cap absent. */
    int strict;
    /* Where the caps came from: "" the environment, else the limits file's
     * path (cc_config_limits). limits_bad: that file is there but cannot
     * be trusted: the GPU is refused (fail closed). */
    char limits_path[CC_PATH_MAX + 16];
    int limits_bad;
    uint64_t limits_generation;
    /* Oversubscription (docs/memory.md, "Oversubscription"): bytes per
     * device that may be allocated beyond mem_limit, served from host
     * memory; 0 = none. Set only where mem_limit is. mem_spill: the seed's
     * CUDA_MEM_OVERSOLD / HAMi's CUDA_OVERSUBSCRIBE: the part of mem_limit
     * beyond the card's memory becomes oversubscription (at bind, when the
     * card's size is known). */
    uint64_t mem_over[CC_MAX_DEVICES];
    uint8_t mem_spill[CC_MAX_DEVICES];
} cc_config_t;

/* Reads the environment through getenv_fn (getenv in the library; tests pass
 * their own). envp ("NAME=value" strings, NULL-terminated; environ in the
 * library; may be NULL) is scanned for per-device names whose index is out
 * of range, which getenv_fn alone cannot find. Never fails: a bad value is
 * reported, counted in errors, and that cap is left absent. */
void cc_config_load(cc_config_t *cfg, const char *(*getenv_fn)(const char *name),
                    char *const *envp);

/* The container's limits file (STATE_DIR/limits, docs/configuration.md,
 * "Where caps come from"), read after cc_config_load: when present its caps
 * replace the environment's, each differing cap variable said once; when
 * present but bad, limits_bad is set and the error names file and field. */
void cc_config_limits(cc_config_t *cfg, const char *(*getenv_fn)(const char *name));

/* Parses a size: bytes, or a number (decimals allowed) with a binary unit
 * k/m/g/t, optionally followed by "i", "b", "ib" in any case ("4g", "4Gi",
 * "4096MiB", "1048576k", "1.5g"). Exact: a fraction of a unit is rounded
 * down to the byte, never by floating point. Returns 0 and sets *out, -1 if
 * s is not a size, CC_SIZE_TOO_LARGE if it is above UINT64_MAX bytes, and
 * CC_SIZE_BELOW_BYTE if it is not zero but rounds down to 0 (which would
 * read as "no cap"). */
#define CC_SIZE_TOO_LARGE (-2)
#define CC_SIZE_BELOW_BYTE (-3)
int cc_parse_size(const char *s, uint64_t *out);

/* Parses a switch: 1/0, true/false, yes/no, on/off in any case, with
 * surrounding blanks. Returns 0 and sets *out to 1 or 0, or -1. */
int cc_parse_bool(const char *s, int *out);

/* Parses a percentage 0..100, optionally ending in "%". Returns 0 or -1. */
int cc_parse_percent(const char *s, uint32_t *out);

#endif

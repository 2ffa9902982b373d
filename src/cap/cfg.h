/* The process's configuration (cudacap/config.h), a cap-layer global: the
 * hook layer loads it once at its first call (hook/init.c, cc_config_load);
 * policy reads it. Zero (every cap off) until loaded. */
#ifndef CC_CAP_CFG_H
#define CC_CAP_CFG_H

#include "cudacap/config.h"

extern cc_config_t cc_cfg;

/* The caps of device `ordinal`, as they stand now. The limits file may
 * change them while the process runs (cap/live.c stores them, relaxed): a
 * reader sees the old value or the new one. Out of range: 0 (no cap). */
static inline uint64_t cc_cfg_mem_cap(int ordinal)
{
    if (ordinal < 0 || ordinal >= CC_MAX_DEVICES) return 0;
    return __atomic_load_n(&cc_cfg.mem_limit[ordinal], __ATOMIC_RELAXED);
}
static inline uint64_t cc_cfg_mem_over(int ordinal)
{
    if (ordinal < 0 || ordinal >= CC_MAX_DEVICES) return 0;
    return __atomic_load_n(&cc_cfg.mem_over[ordinal], __ATOMIC_RELAXED);
}
static inline uint32_t cc_cfg_sm(int ordinal)
{
    if (ordinal < 0 || ordinal >= CC_MAX_DEVICES) return 0;
    return __atomic_load_n(&cc_cfg.sm_limit[ordinal], __ATOMIC_RELAXED);
}
static inline uint32_t cc_cfg_sm_soft(int ordinal)
{
    if (ordinal < 0 || ordinal >= CC_MAX_DEVICES) return 0;
    return __atomic_load_n(&cc_cfg.sm_soft_limit[ordinal], __ATOMIC_RELAXED);
}

/* Whether device `ordinal` has an SM cap: the one place this is decided
 * (the loader stores 100 % and above as 0, "no cap"). */
static inline int cc_cfg_sm_capped(int ordinal)
{
    uint32_t v = cc_cfg_sm(ordinal);
    return v > 0 && v < 100;
}

#endif

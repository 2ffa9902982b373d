/* The process's configuration (cudacap/config.h), a cap-layer global: the
 * hook layer loads it once at its first call (hook/init.c, cc_config_load);
 * policy reads it. Zero (every cap off) until loaded. */
#ifndef CC_CAP_CFG_H
#define CC_CAP_CFG_H

#include "cudacap/config.h"

extern cc_config_t cc_cfg;

/* Whether device `ordinal` has an SM cap: the one place this is decided
 * (the loader stores 100 % and above as 0, "no cap"). */
static inline int cc_cfg_sm_capped(int ordinal)
{
    return ordinal >= 0 && ordinal < CC_MAX_DEVICES && cc_cfg.sm_limit[ordinal] > 0 &&
           cc_cfg.sm_limit[ordinal] < 100;
}

#endif

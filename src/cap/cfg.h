/* The process's configuration (cudacap/config.h), a cap-layer global: the
 * hook layer loads it once at its first call (hook/init.c, cc_config_load);
 * policy reads it. Zero (every cap off) until loaded. */
#ifndef CC_CAP_CFG_H
#define CC_CAP_CFG_H

#include "cudacap/config.h"

extern cc_config_t cc_cfg;

#endif

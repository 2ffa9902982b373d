/* Oversubscription in the configuration (config_over.c). */
#ifndef CC_CAP_CONFIG_OVER_H
#define CC_CAP_CONFIG_OVER_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cap/limits.h"
#include "cudacap/config.h"

/* After the caps and CUDACAP_MEM_OVERSUBSCRIBE are loaded: applies the
 * seed's ratio (x 1000, 0 unset) to devices without an explicit
 * oversubscription, records the seed's oversold switch and HAMi's
 * CUDA_OVERSUBSCRIBE as cfg->mem_spill, and drops (said) oversubscription
 * without a cap. */
void cc_config_over(cc_config_t *cfg, const uint64_t ratio[CC_MAX_DEVICES],
                    const uint64_t sold[CC_MAX_DEVICES], int hami);

/* A limits file in force: its oversubscription replaces the environment's
 * (said once when they differ). */
void cc_config_over_limits(cc_config_t *cfg, const cc_limits_t *l);

/* At bind, with the card's memory known: a spilling device whose cap is
 * more than the card moves the excess into its oversubscription. */
void cc_config_over_resolve(uint64_t *cap, uint64_t *over, int spill, uint64_t phys_total);

#endif

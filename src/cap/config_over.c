/* Oversubscription in the configuration (docs/memory.md, "Oversubscription"):
 * how CUDACAP_MEM_OVERSUBSCRIBE, the seed's CUDA_MEM_RATIO / CUDA_MEM_OVERSOLD
 * and HAMi's CUDA_OVERSUBSCRIBE combine with each device's memory cap, after
 * cap/config.c has read them. Every combination that cannot mean anything
 * (oversubscription without a cap) is said and dropped, never guessed. */
#include "cap/config_over.h"

#include "common/log.h"

/* A message once per distinct text: an all-device value would repeat it for
 * 16 devices. */
static int again(char *said, size_t n, const char *key)
{
    int same = strcmp(said, key) == 0;
    snprintf(said, n, "%s", key);
    return same;
}

void cc_config_over(cc_config_t *cfg, const uint64_t ratio[CC_MAX_DEVICES],
                    const uint64_t sold[CC_MAX_DEVICES], int hami)
{
    char said[3][32] = {"", "", ""};
    for (int i = 0; i < CC_MAX_DEVICES; i++) {
        uint64_t cap = cfg->mem_limit[i];
        char key[32];
        cfg->mem_spill[i] = cap && (sold[i] || hami);
        if (!cap) {
            /* Nothing to go beyond: an oversubscription asks for a cap. */
            if (cfg->mem_over[i] && !again(said[0], sizeof said[0], "over")) {
                cc_error("CUDACAP_MEM_OVERSUBSCRIBE without a memory cap on device %d: "
                         "oversubscription is memory beyond a cap; none", i);
                cfg->errors++;
            }
            if (ratio[i] > 1000 && !again(said[1], sizeof said[1], "ratio")) {
                cc_error("CUDA_MEM_RATIO without CUDA_MEM_LIMIT on device %d: the ratio splits "
                         "the size the container sees; no oversubscription from it", i);
                cfg->errors++;
            }
            cfg->mem_over[i] = 0;
            continue;
        }
        if (ratio[i] <= 1000) continue; /* unset, or 1: all of it on the device */
        if (cfg->mem_over[i]) {
            snprintf(key, sizeof key, "both%llu", (unsigned long long)cfg->mem_over[i]);
            if (!again(said[2], sizeof said[2], key))
                cc_warn("CUDA_MEM_RATIO is ignored on device %d: CUDACAP_MEM_OVERSUBSCRIBE "
                        "says how much goes beyond the cap", i);
            continue;
        }
        /* The seed's split: L visible, L / R on the device, the rest host. */
        uint64_t dev = (uint64_t)((unsigned __int128)cap * 1000 / ratio[i]);
        if (!dev) dev = 1;
        cfg->mem_limit[i] = dev;
        cfg->mem_over[i] = cap - dev;
    }
}

void cc_config_over_resolve(uint64_t *cap, uint64_t *over, int spill, uint64_t phys_total)
{
    if (!spill || !phys_total || *cap <= phys_total) return;
    /* The card cannot hold the cap: what it lacks is served from the host. */
    *over += *cap - phys_total;
    *cap = phys_total;
}

void cc_config_over_limits(cc_config_t *cfg, const cc_limits_t *l)
{
    uint64_t over[CC_MAX_DEVICES];
    cc_limits_over_effective(l, over);
    int said = 0;
    for (int i = 0; i < CC_MAX_DEVICES; i++) {
        /* The tenant's environment cannot raise what the node wrote. */
        if ((cfg->mem_over[i] != over[i] || cfg->mem_spill[i]) && !said++)
            cc_warn("oversubscription from the environment is ignored: the container's limits file "
                    "%s gives device %d %llu bytes", cfg->limits_path, i, (unsigned long long)over[i]);
        cfg->mem_over[i] = cfg->mem_limit[i] ? over[i] : 0;
        cfg->mem_spill[i] = 0;
    }
}

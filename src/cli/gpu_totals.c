/* Per-device totals over the containers (gpu_info.h): what the exporter's
 * device series and top's GPU lines show. */
#include <string.h>

#include "cli/gpu_info.h"

int gpu_totals(struct snap *const *s, int n, struct gpu_total *t, int max)
{
    int nt = 0;
    for (int c = 0; c < n; c++)
        for (int i = 0; i < s[c]->ndev; i++) {
            const struct snap_dev *d = &s[c]->dev[i];
            uint64_t mem = d->has_mem ? d->mem_limit : 0;
            uint32_t sm = d->has_sm ? d->sm_limit_pm : 0;
            int k = 0;
            while (k < nt && strcmp(t[k].d->uuid, d->uuid)) k++;
            if (k == nt) {
                if (nt == max) continue;
                memset(&t[nt], 0, sizeof t[nt]);
                t[nt++].d = d;
            }
            if (d->has_mem) t[k].mem_used += d->mem_used, t[k].host_used += d->host_used;
            /* The device's own utilization: the freshest sample any
             * container published for it. */
            if (d->has_sm && d->has_sample && (!t[k].has_util || d->sample_age_ns < t[k].util_age_ns))
                t[k].has_util = 1, t[k].util_pm = d->dev_util_pm, t[k].util_age_ns = d->sample_age_ns;
            if (!mem && !sm) continue;
            t[k].mem_caps += mem;
            t[k].mem_capped += mem != 0;
            t[k].sm_caps_pm += sm;
            t[k].containers++;
        }
    return nt;
}

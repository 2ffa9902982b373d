/* Environment parsing (docs/configuration.md), from the options table
 * (common/options.h): names, aliases, per-device forms, kinds and defaults come
 * from its rows, values parse as their kind (common/opt_value.c, sizes in
 * common/size.c). When a CUDACAP_* name and its HAMi/Volcano alias are both
 * set the CUDACAP_* one wins. A value that does not parse leaves that cap
 * absent and says so. */
#include "cudacap/config.h"

#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cap/config_over.h"
#include "cap/limits.h"
#include "common/options.h"
#include "common/controls.h"
#include "common/log.h"

/* ---- The configuration, row by row ---------------------------------------- */

typedef const char *(*env_fn)(const char *);

/* A value that did not parse: said, and counted. */
static void bad(cc_config_t *cfg, const cc_option_t *o, const cc_opt_value_t *v, int rc,
                const char *tail)
{
    cc_opt_report(o, v->name, v->value, rc, tail);
    cfg->errors++;
}

/* A one-value option: its value, or its default when unset or bad (a bad
 * one said, ending with the row's .bad). */
static uint64_t load_one(cc_config_t *cfg, int id, env_fn get)
{
    const cc_option_t *o = &cc_options[id];
    cc_opt_value_t v;
    uint64_t out;
    int rc;
    cc_opt_get(o, -1, get, &v);
    if (!v.value) return o->def;
    cc_opt_say_shadowed(&v);
    if ((rc = cc_opt_parse(o, v.value, &out)) == 0) return out;
    bad(cfg, o, &v, rc, o->bad);
    return o->def;
}

/* The seed system's per-device names (CUDA_MEM_LIMIT_<i>, ...) number the
 * devices by their place in MANAGER_VISIBLE_DEVICES (GPU UUIDs). seed_of[o]:
 * that place for CUDA ordinal o, -1 where o is not in the list. Where
 * CUDA_VISIBLE_DEVICES names the devices by UUID, ordinal o is its o-th
 * entry, found in the list by UUID (a prefix, as CUDA takes one); otherwise
 * place i is ordinal i (the order the device plugin exposes them in). */
#define SEED_UUID_LEN 96
static int split_uuids(const char *v, char out[CC_MAX_DEVICES][SEED_UUID_LEN])
{
    int n = 0;
    while (v && *v && n < CC_MAX_DEVICES) {
        while (*v == ' ' || *v == ',') v++;
        size_t len = strcspn(v, ", ");
        if (!len) break;
        snprintf(out[n++], SEED_UUID_LEN, "%.*s", (int)(len < SEED_UUID_LEN ? len : SEED_UUID_LEN - 1), v);
        v += len;
    }
    return n;
}

static void seed_places(env_fn get, int seed_of[CC_MAX_DEVICES])
{
    cc_opt_value_t m;
    cc_opt_get(&cc_options[CC_OPT_SEED_DEVICES], -1, get, &m);
    for (int o = 0; o < CC_MAX_DEVICES; o++) seed_of[o] = o;
    if (!m.value) return;
    static char seed[CC_MAX_DEVICES][SEED_UUID_LEN], vis[CC_MAX_DEVICES][SEED_UUID_LEN];
    int ns = split_uuids(m.value, seed);
    const char *cvd = get("CUDA_VISIBLE_DEVICES");
    int nv = cvd ? split_uuids(cvd, vis) : 0, by_uuid = nv > 0;
    for (int k = 0; k < nv; k++)
        if (strncmp(vis[k], "GPU-", 4) != 0 && strncmp(vis[k], "MIG-", 4) != 0) by_uuid = 0;
    for (int o = 0; o < CC_MAX_DEVICES; o++) {
        seed_of[o] = o < ns ? o : -1;
        if (!by_uuid) continue;
        seed_of[o] = -1;
        for (int j = 0; o < nv && j < ns; j++)
            if (strncmp(seed[j], vis[o], strlen(vis[o])) == 0) {
                seed_of[o] = j;
                break;
            }
    }
}

/* A per-device cap: NAME and NAME_<i>, each under its CUDACAP_* name, its
 * alias and the seed's name (at the device's seed place, seed_of). The
 * per-device value overrides the all-devices one. src (may be NULL): per
 * device, the name the value came from ("" none). */
static void load_family(cc_config_t *cfg, int id, env_fn get, const int *seed_of,
                        uint64_t out[CC_MAX_DEVICES], char (*src)[64])
{
    const cc_option_t *o = &cc_options[id];
    cc_opt_value_t all, one;
    const char *which = NULL;
    uint64_t allv = 0, v;
    int rc;
    cc_opt_get(o, -1, get, &all);
    cc_opt_say_shadowed(&all);
    if (all.value) {
        which = all.name;
        if ((rc = cc_opt_parse(o, all.value, &allv)) != 0) {
            bad(cfg, o, &all, rc, "running with no cap from it");
            allv = 0;
            which = NULL;
        }
    }
    for (int i = 0; i < CC_MAX_DEVICES; i++) {
        char tail[64];
        out[i] = allv;
        if (src) snprintf(src[i], sizeof src[i], "%s", which && allv ? which : "");
        cc_opt_get_seed(o, i, seed_of[i], get, &one);
        cc_opt_say_shadowed(&one);
        if (!one.value) continue;
        if ((rc = cc_opt_parse(o, one.value, &v)) != 0) {
            snprintf(tail, sizeof tail, "running device %d with no cap from it", i);
            bad(cfg, o, &one, rc, tail);
            out[i] = 0; /* absent, not the all-device value the operator overrode */
            if (src) src[i][0] = 0;
            continue;
        }
        out[i] = v;
        if (src) snprintf(src[i], sizeof src[i], "%s", v ? one.name : "");
    }
}

/* load_family reads NAME_0 .. NAME_15 only, so NAME_16, NAME_99, NAME_00
 * or NAME_-1 would be ignored without a word: find them in the environment. */
static int index_ok(const char *ix, size_t len)
{
    if (len == 0 || len > 2 || (len == 2 && ix[0] == '0')) return 0;
    int v = 0;
    for (size_t k = 0; k < len; k++) {
        if (!isdigit((unsigned char)ix[k])) return 0;
        v = v * 10 + (ix[k] - '0');
    }
    return v < CC_MAX_DEVICES;
}

/* e: "NAME=value" (eq at its '=', a value after it). */
static void check_index(cc_config_t *cfg, const char *e, const char *eq)
{
    for (int id = 0; id < CC_OPT_COUNT; id++) {
        for (int alias = 0; alias < 3 && cc_options[id].per_device; alias++) {
            char base[64];
            if (!cc_opt_name(&cc_options[id], alias, -1, base, sizeof base)) continue;
            size_t n = strlen(base);
            if (strncmp(e, base, n) != 0 || e[n] != '_') continue;
            n++;
            if (index_ok(e + n, (size_t)(eq - e - (ptrdiff_t)n))) return;
            cc_error("%.*s=\"%s\": \"%.*s\" is not a device index 0..%d (the device as this "
                     "process sees it, after CUDA_VISIBLE_DEVICES); ignored",
                     (int)(eq - e), e, eq + 1, (int)(eq - e - (ptrdiff_t)n), e + n,
                     CC_MAX_DEVICES - 1);
            cfg->errors++;
            return;
        }
    }
}

static void check_indices(cc_config_t *cfg, char *const *envp)
{
    for (; envp && *envp; envp++) {
        const char *eq = strchr(*envp, '=');
        if (eq && eq[1]) check_index(cfg, *envp, eq); /* no value: unset, as for every name */
    }
}

/* The elastic limit beside the hard one (docs/compute.md, "Elastic caps"):
 * at least the hard cap; 0 or unset = not elastic. A soft limit below the
 * hard one, or without a hard one, is an error naming both; the device then
 * runs with the hard cap alone. Each message once per pair of names (an
 * all-device value would repeat it for 16 devices). */
static void load_soft(cc_config_t *cfg, const uint64_t *hard, const uint64_t *soft,
                      char (*hsrc)[64], char (*ssrc)[64])
{
    const cc_option_t *h = &cc_options[CC_OPT_SM_LIMIT];
    char said[160] = "";
    for (int i = 0; i < CC_MAX_DEVICES; i++) {
        char key[160];
        cfg->sm_soft_limit[i] = 0;
        if (!soft[i]) continue;
        snprintf(key, sizeof key, "%s|%s", ssrc[i], hsrc[i]);
        int again = strcmp(key, said) == 0;
        snprintf(said, sizeof said, "%s", key);
        if (!hard[i] || hard[i] >= 100) {
            if (soft[i] >= 100 && hard[i] >= 100) continue; /* 100/100: no cap, nothing lost */
            if (!again)
                cc_error("%s=%llu without a hard SM cap (%s or %s, 1..99) on device %d%s: an "
                         "elastic limit needs a guaranteed share beside it; no compute cap from it",
                         ssrc[i], (unsigned long long)soft[i], h->name, h->alias, i,
                         hard[i] >= 100 ? " (the hard one is 100: no cap)" : "");
            cfg->errors += !again;
            continue;
        }
        if (soft[i] < hard[i]) {
            if (!again)
                cc_error("%s=%llu is below %s=%llu on device %d (a soft limit is at least the "
                         "hard one); running with the hard cap alone", ssrc[i],
                         (unsigned long long)soft[i], hsrc[i], (unsigned long long)hard[i], i);
            cfg->errors += !again;
            continue;
        }
        if (soft[i] > hard[i]) cfg->sm_soft_limit[i] = (uint32_t)soft[i];
    }
}

static void load_sm(cc_config_t *cfg, env_fn get, const int *seed_of)
{
    uint64_t v[CC_MAX_DEVICES], sv[CC_MAX_DEVICES];
    char hsrc[CC_MAX_DEVICES][64], ssrc[CC_MAX_DEVICES][64];
    load_family(cfg, CC_OPT_SM_LIMIT, get, seed_of, v, hsrc);
    load_family(cfg, CC_OPT_SM_SOFT_LIMIT, get, seed_of, sv, ssrc);
    /* HAMi's policy switch: 1 = "disable" turns compute capping off. */
    int off = load_one(cfg, CC_OPT_CORE_POLICY, get) != 0;
    for (int i = 0; i < CC_MAX_DEVICES; i++)
        cfg->sm_limit[i] = (off || v[i] >= 100) ? 0 : (uint32_t)v[i];
    if (!off) load_soft(cfg, v, sv, hsrc, ssrc);
}

static void load_state_dir(cc_config_t *cfg, env_fn get)
{
    const cc_option_t *o = &cc_options[CC_OPT_STATE_DIR];
    cc_opt_value_t d;
    /* Not cc_opt_say_shadowed: the alias names a file beside the folder, so
     * the two values differ by nature. */
    cc_opt_get(o, -1, get, &d);
    if (!d.value) {
        snprintf(cfg->state_dir, sizeof cfg->state_dir, "%s", o->def_path);
        return;
    }
    const char *val = d.value, *suffix = d.from_alias == 1 && o->alias_suffix ? o->alias_suffix : "";
    size_t n = strlen(val) + strlen(suffix);
    if (n >= sizeof cfg->state_dir) {
        /* Not the default folder: that may be another container's. No
         * shared state at all (""): every cap is kept by this process. */
        cc_error("%s=\"%.40s...\" (%zu bytes) makes a state folder path longer than %d bytes; "
                 "this process keeps its caps on its own, not shared with the container's "
                 "other processes", d.name, val, strlen(val), CC_PATH_MAX - 1);
        cfg->errors++;
        cfg->state_dir[0] = 0;
        return;
    }
    memcpy(cfg->state_dir, val, strlen(val));
    memcpy(cfg->state_dir + strlen(val), suffix, strlen(suffix) + 1); /* n fits: checked */
}

/* The rows of common/options.h but the log level (common/log.c reads it before
 * this runs, so that these messages already follow it) and the ignored HAMi
 * names (hook/init.c warns about them), in the table's order. */
void cc_config_load(cc_config_t *cfg, const char *(*get)(const char *), char *const *envp)
{
    int seed_of[CC_MAX_DEVICES];
    memset(cfg, 0, sizeof *cfg);
    seed_places(get, seed_of);
    load_family(cfg, CC_OPT_MEM_LIMIT, get, seed_of, cfg->mem_limit, NULL);
    { /* oversubscription: resolved against the caps in config_over.c */
        uint64_t ratio[CC_MAX_DEVICES], sold[CC_MAX_DEVICES];
        load_family(cfg, CC_OPT_MEM_OVERSUBSCRIBE, get, seed_of, cfg->mem_over, NULL);
        load_family(cfg, CC_OPT_MEM_RATIO, get, seed_of, ratio, NULL);
        load_family(cfg, CC_OPT_MEM_OVERSOLD, get, seed_of, sold, NULL);
        cc_config_over(cfg, ratio, sold, load_one(cfg, CC_OPT_OVERSUBSCRIBE, get) != 0);
    }
    load_sm(cfg, get, seed_of);
    cfg->sm_burst_ms = (uint32_t)load_one(cfg, CC_OPT_SM_BURST, get);
    check_indices(cfg, envp);
    load_state_dir(cfg, get);
    cfg->controller = (cc_controller_t)load_one(cfg, CC_OPT_CONTROLLER, get);
    cfg->shared_bucket = (int)load_one(cfg, CC_OPT_SHARED_BUCKET, get);
    cfg->count_calls = (int)load_one(cfg, CC_OPT_COUNT_CALLS, get);
    cfg->ctx_overhead = load_one(cfg, CC_OPT_CTX_OVERHEAD, get);
    cfg->strict = (int)load_one(cfg, CC_OPT_STRICT, get);
}

/* ---- The limits file --------------------------------------------------- */

/* The environment's caps the file overrides: each variable set to a value
 * other than the file's for its device (the unsuffixed names: device 0's),
 * said once. */
static void say_ignored(const cc_config_t *cfg, env_fn get, const uint64_t *mem,
                        const uint32_t *sm, const uint32_t *soft)
{
    static const int ids[3] = {CC_OPT_MEM_LIMIT, CC_OPT_SM_LIMIT, CC_OPT_SM_SOFT_LIMIT};
    for (int k = 0; k < 3; k++) {
        const cc_option_t *o = &cc_options[ids[k]];
        for (int dev = -1; dev < CC_MAX_DEVICES; dev++)
            for (int alias = 0; alias < 3; alias++) {
                char name[64], file[32];
                uint64_t v = 0, want;
                if (!cc_opt_name(o, alias, dev, name, sizeof name)) continue;
                const char *val = get(name);
                if (!val || !*val) continue;
                int d = dev < 0 ? 0 : dev;
                want = k == 0 ? mem[d] : k == 1 ? sm[d] : soft[d];
                if (cc_opt_parse(o, val, &v) == 0 && (k == 0 ? v : v >= 100 ? 0 : v) == want) continue;
                if (k == 0 && want) snprintf(file, sizeof file, "%llu bytes", (unsigned long long)want);
                else if (want) snprintf(file, sizeof file, "%llu %%", (unsigned long long)want);
                else snprintf(file, sizeof file, "no cap");
                cc_warn("%s=\"%s\" is ignored: the container's limits file %s gives device %d %s",
                        name, val, cfg->limits_path, d, file);
            }
    }
}

/* A bad limits file: this process is refused the GPU (fail closed: its
 * caps are unknown, and the environment may be the container's own). */
static void CC_CONTROL_POINT(refuse_bad_limits)(cc_config_t *cfg, const char *why)
{
    cc_error("limits file %s: %s; this process is refused the GPU (a bad limits file is never "
             "trusted, and the environment cannot stand in for it)", cfg->limits_path, why);
    cfg->limits_bad = 1;
    cfg->errors++;
    for (int i = 0; i < CC_MAX_DEVICES; i++)
        cfg->mem_limit[i] = 0, cfg->sm_limit[i] = 0, cfg->sm_soft_limit[i] = 0;
}

/* A good limits file: its caps replace the environment's (which the
 * container can set), and the names it overrides are said. */
static void CC_CONTROL_POINT(take_limits)(cc_config_t *cfg, env_fn get,
                                          const uint64_t *mem, const uint32_t *sm,
                                          const uint32_t *soft, const cc_limits_t *l)
{
    say_ignored(cfg, get, mem, sm, soft);
    memcpy(cfg->mem_limit, mem, sizeof cfg->mem_limit);
    memcpy(cfg->sm_limit, sm, sizeof cfg->sm_limit);
    memcpy(cfg->sm_soft_limit, soft, sizeof cfg->sm_soft_limit);
    cc_config_over_limits(cfg, l); /* the file's oversubscription, not the environment's */
    cfg->limits_generation = l->generation;
    cc_info("caps from the limits file %s (generation %llu)", cfg->limits_path,
            (unsigned long long)l->generation);
}

void cc_config_limits(cc_config_t *cfg, const char *(*get)(const char *))
{
    cc_limits_t l;
    char why[256];
    int rc = cc_limits_read(cfg->state_dir, &l, why, sizeof why);
    if (rc == 0) return;
    snprintf(cfg->limits_path, sizeof cfg->limits_path, "%s/%s", cfg->state_dir, CC_LIMITS_FILE);
    if (rc < 0) {
        refuse_bad_limits(cfg, why);
        return;
    }
    uint64_t mem[CC_MAX_DEVICES];
    uint32_t sm[CC_MAX_DEVICES], soft[CC_MAX_DEVICES];
    cc_limits_effective(&l, mem, sm, soft);
    take_limits(cfg, get, mem, sm, soft, &l);
}

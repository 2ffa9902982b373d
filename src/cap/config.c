/* Environment parsing (docs/configuration.md). Every CUDACAP_* name has a HAMi/Volcano
 * equivalent that the device plugins set; when both are set the CUDACAP_* one
 * wins. A value that does not parse leaves that cap absent and says so. */
#include "cudacap/config.h"

#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/log.h"

int cc_parse_size(const char *s, uint64_t *out)
{
    if (!s) return -1;
    while (isspace((unsigned char)*s)) s++;
    if (!isdigit((unsigned char)*s)) return -1; /* no sign, no hex: sizes are decimal */
    /* Syntax first, so that "not a size" wins over "too large". */
    const char *w0 = s;
    while (isdigit((unsigned char)*s)) s++;
    const char *w1 = s, *f0 = s, *f1 = s;
    if (*s == '.') {
        f0 = ++s;
        if (!isdigit((unsigned char)*s)) return -1;
        while (isdigit((unsigned char)*s)) s++;
        f1 = s;
    }
    unsigned shift = 0;
    switch (tolower((unsigned char)*s)) {
    case 'k': shift = 10; s++; break;
    case 'm': shift = 20; s++; break;
    case 'g': shift = 30; s++; break;
    case 't': shift = 40; s++; break;
    default: break;
    }
    /* Accept the spellings people write: 4G, 4Gi, 4GB, 4GiB, 4b (bytes). */
    if (shift && tolower((unsigned char)*s) == 'i') s++;
    if (tolower((unsigned char)*s) == 'b') s++;
    while (isspace((unsigned char)*s)) s++;
    if (*s) return -1;
    if (f1 > f0 && !shift) return -1; /* fractional bytes make no sense */

    uint64_t v = 0;
    for (const char *p = w0; p < w1; p++)
        if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, (uint64_t)(*p - '0'), &v))
            return CC_SIZE_TOO_LARGE;
    if (v > (UINT64_MAX >> shift)) return CC_SIZE_TOO_LARGE;
    v <<= shift;
    /* The fraction 0.d1..dn of a unit U, exactly rounded down, for any n:
     * from the last digit back, acc = floor((dk * U + acc) / 10). Taking the
     * floor at each step loses nothing (floor((m + f) / 10) = floor(m / 10)
     * for an integer m and 0 <= f < 1), and acc < U <= 2^40 keeps every
     * intermediate below 10 * 2^40. */
    uint64_t acc = 0;
    for (const char *p = f1; p > f0; p--) acc = (((uint64_t)(p[-1] - '0') << shift) + acc) / 10;
    if (__builtin_add_overflow(v, acc, &v)) return CC_SIZE_TOO_LARGE;
    if (v == 0)
        for (const char *p = w0; p < f1; p++)
            if (*p > '0') return CC_SIZE_BELOW_BYTE; /* 0.0000001k: not "no cap" */
    *out = v;
    return 0;
}

/* s, without surrounding blanks, equals word in any case. */
static int word_is(const char *s, const char *word)
{
    while (isspace((unsigned char)*s)) s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1])) n--;
    return n == strlen(word) && strncasecmp(s, word, n) == 0;
}

int cc_parse_bool(const char *s, int *out)
{
    static const char *const on[] = {"1", "true", "yes", "on"}, *const off[] = {"0", "false", "no", "off"};
    if (!s) return -1;
    for (size_t i = 0; i < sizeof on / sizeof on[0]; i++) {
        if (word_is(s, on[i])) return *out = 1, 0;
        if (word_is(s, off[i])) return *out = 0, 0;
    }
    return -1;
}

int cc_parse_percent(const char *s, uint32_t *out)
{
    if (!s) return -1;
    while (isspace((unsigned char)*s)) s++;
    if (!isdigit((unsigned char)*s)) return -1;
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno) return -1;
    if (*end == '%') end++;
    while (isspace((unsigned char)*end)) end++;
    if (*end || v > 100) return -1;
    *out = (uint32_t)v;
    return 0;
}

/* The first of the names that is set (non-empty) wins; conflicting values of a
 * later name are reported. Returns the value or NULL, and its name. */
static const char *first_set(const char *(*get)(const char *), const char *const *names,
                             const char **which)
{
    const char *val = NULL;
    for (; *names; names++) {
        const char *v = get(*names);
        if (!v || !*v) continue;
        if (!val) {
            val = v;
            *which = *names;
        } else if (strcmp(v, val) != 0) {
            cc_warn("%s=\"%s\" differs from %s=\"%s\"; using %s", *names, v, *which, val, *which);
        }
    }
    return val;
}

#define SIZE_WHAT "a size (examples: 4g, 4Gi, 4096m, 1048576k, 4294967296)"

static int parse_size_u64(const char *s, uint64_t *out) { return cc_parse_size(s, out); }

static int parse_percent_u64(const char *s, uint64_t *out)
{
    uint32_t p;
    if (cc_parse_percent(s, &p) != 0) return -1;
    *out = p;
    return 0;
}

/* What a value that did not parse is; the message ends with what the
 * process does instead (tail). */
static void report(const char *name, const char *v, int rc, const char *what, const char *tail,
                   int *errors)
{
    if (rc == CC_SIZE_TOO_LARGE)
        cc_error("%s=\"%s\" is larger than the largest size, %llu bytes (16 EiB - 1); %s", name, v,
                 (unsigned long long)UINT64_MAX, tail);
    else if (rc == CC_SIZE_BELOW_BYTE)
        cc_error("%s=\"%s\" is not 0 but less than one byte; %s", name, v, tail);
    else
        cc_error("%s=\"%s\" is not %s; %s", name, v, what, tail);
    (*errors)++;
}

/* One cap family: NAME and NAME_<i>, each under its cudacap and its HAMi name.
 * The per-device value overrides the all-device one. */
struct cap_family {
    const char *ours, *hami; /* base names */
    int (*parse)(const char *, uint64_t *);
    const char *what; /* for messages */
};

/* src (may be NULL): per device, the name the value came from ("" none). */
static void load_family(const struct cap_family *f, const char *(*get)(const char *),
                        uint64_t out[CC_MAX_DEVICES], int *errors, char (*src)[64])
{
    const char *all_names[] = {f->ours, f->hami, NULL};
    const char *which = NULL;
    uint64_t all = 0;
    const char *v = first_set(get, all_names, &which);
    int rc;
    if (v && (rc = f->parse(v, &all)) != 0) {
        report(which, v, rc, f->what, "running with no cap from it", errors);
        all = 0;
        which = NULL;
    }
    for (int i = 0; i < CC_MAX_DEVICES; i++) {
        char a[64], b[64], tail[64];
        snprintf(a, sizeof a, "%s_%d", f->ours, i);
        snprintf(b, sizeof b, "%s_%d", f->hami, i);
        const char *names[] = {a, b, NULL};
        const char *w = NULL;
        const char *dv = first_set(get, names, &w);
        uint64_t one;
        out[i] = all;
        if (src) snprintf(src[i], sizeof src[i], "%s", which && all ? which : "");
        if (!dv) continue;
        if ((rc = f->parse(dv, &one)) != 0) {
            snprintf(tail, sizeof tail, "running device %d with no cap from it", i);
            report(w, dv, rc, f->what, tail, errors);
            out[i] = 0; /* absent, not the all-device value the operator overrode */
            if (src) src[i][0] = 0;
            continue;
        }
        out[i] = one;
        if (src) snprintf(src[i], sizeof src[i], "%s", one ? w : "");
    }
}

/* The loops above read NAME_0 .. NAME_15 only, so NAME_16, NAME_99, NAME_00
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

static void check_indices(cc_config_t *cfg, char *const *envp)
{
    static const char *const bases[] = {"CUDACAP_MEM_LIMIT_", "CUDA_DEVICE_MEMORY_LIMIT_",
                                        "CUDACAP_SM_LIMIT_", "CUDA_DEVICE_SM_LIMIT_",
                                        "CUDACAP_SM_SOFT_LIMIT_", "CUDA_CORE_SOFT_LIMIT_"};
    for (; envp && *envp; envp++) {
        const char *e = *envp, *eq = strchr(e, '=');
        if (!eq || !eq[1]) continue; /* no value: unset, as for every name */
        for (size_t b = 0; b < sizeof bases / sizeof bases[0]; b++) {
            size_t n = strlen(bases[b]);
            if (strncmp(e, bases[b], n) != 0) continue;
            if (index_ok(e + n, (size_t)(eq - e - (ptrdiff_t)n))) break;
            cc_error("%.*s=\"%s\": \"%.*s\" is not a device index 0..%d (the device as this "
                     "process sees it, after CUDA_VISIBLE_DEVICES); ignored",
                     (int)(eq - e), e, eq + 1, (int)(eq - e - (ptrdiff_t)n), e + n,
                     CC_MAX_DEVICES - 1);
            cfg->errors++;
            break;
        }
    }
}

static void load_mem(cc_config_t *cfg, const char *(*get)(const char *))
{
    static const struct cap_family mem = {"CUDACAP_MEM_LIMIT", "CUDA_DEVICE_MEMORY_LIMIT",
                                          parse_size_u64, SIZE_WHAT};
    load_family(&mem, get, cfg->mem_limit, &cfg->errors, NULL);
}

/* The elastic limit beside the hard one (docs/compute.md, "Elastic caps"):
 * at least the hard cap; 0 or unset = not elastic. A soft limit below the
 * hard one, or without a hard one, is an error naming both; the device then
 * runs with the hard cap alone. Each message once per pair of names (an
 * all-device value would repeat it for 16 devices). */
static void load_soft(cc_config_t *cfg, const uint64_t *hard, const uint64_t *soft,
                      char (*hsrc)[64], char (*ssrc)[64])
{
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
                cc_error("%s=%llu without a hard SM cap (CUDACAP_SM_LIMIT or "
                         "CUDA_DEVICE_SM_LIMIT, 1..99) on device %d%s: an elastic limit needs a "
                         "guaranteed share beside it; no compute cap from it",
                         ssrc[i], (unsigned long long)soft[i], i,
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

static void load_sm(cc_config_t *cfg, const char *(*get)(const char *))
{
    static const struct cap_family sm = {"CUDACAP_SM_LIMIT", "CUDA_DEVICE_SM_LIMIT",
                                         parse_percent_u64, "a percentage 0..100"};
    static const struct cap_family soft = {"CUDACAP_SM_SOFT_LIMIT", "CUDA_CORE_SOFT_LIMIT",
                                           parse_percent_u64, "a percentage 0..100"};
    uint64_t v[CC_MAX_DEVICES], sv[CC_MAX_DEVICES];
    char hsrc[CC_MAX_DEVICES][64], ssrc[CC_MAX_DEVICES][64];
    load_family(&sm, get, v, &cfg->errors, hsrc);
    load_family(&soft, get, sv, &cfg->errors, ssrc);
    /* HAMi's policy switch (default, force, disable; HAMi-core compares
     * lowercase and uppercase spellings). cudacap always enforces a set cap,
     * so "default" and "force" are the same here; only "disable" turns
     * compute capping off. */
    const char *pol = get("GPU_CORE_UTILIZATION_POLICY");
    int off = 0;
    if (pol && *pol) {
        if (word_is(pol, "disable")) off = 1;
        else if (!word_is(pol, "default") && !word_is(pol, "force")) {
            cc_error("GPU_CORE_UTILIZATION_POLICY=\"%s\" is not one of default, force, disable; "
                     "using default (the SM cap applies)", pol);
            cfg->errors++;
        }
    }
    for (int i = 0; i < CC_MAX_DEVICES; i++)
        cfg->sm_limit[i] = (off || v[i] >= 100) ? 0 : (uint32_t)v[i];
    if (!off) load_soft(cfg, v, sv, hsrc, ssrc);
}

static void load_state_dir(cc_config_t *cfg, const char *(*get)(const char *))
{
    const char *d = get("CUDACAP_STATE_DIR");
    const char *cache = get("CUDA_DEVICE_MEMORY_SHARED_CACHE");
    const char *name, *val, *suffix;
    if (d && *d) {
        name = "CUDACAP_STATE_DIR", val = d, suffix = "";
    } else if (cache && *cache) {
        /* HAMi/Volcano name one cache FILE per container (a random UUID in its
         * name); our per-container folder is that path plus ".d". */
        name = "CUDA_DEVICE_MEMORY_SHARED_CACHE", val = cache, suffix = ".d";
    } else {
        snprintf(cfg->state_dir, sizeof cfg->state_dir, "/tmp/cudacap");
        return;
    }
    size_t n = strlen(val) + strlen(suffix);
    if (n >= sizeof cfg->state_dir) {
        /* Not the default folder: that may be another container's. No
         * shared state at all (""): every cap is kept by this process. */
        cc_error("%s=\"%.40s...\" (%zu bytes) makes a state folder path longer than %d bytes; "
                 "this process keeps its caps on its own, not shared with the container's "
                 "other processes", name, val, strlen(val), CC_PATH_MAX - 1);
        cfg->errors++;
        cfg->state_dir[0] = 0;
        return;
    }
    memcpy(cfg->state_dir, val, strlen(val));
    memcpy(cfg->state_dir + strlen(val), suffix, strlen(suffix) + 1); /* n fits: checked */
}

static void load_controller(cc_config_t *cfg, const char *(*get)(const char *))
{
    const char *c = get("CUDACAP_CONTROLLER");
    cfg->controller = CC_CTRL_AUTO;
    if (!c || !*c || word_is(c, "auto")) return;
    if (word_is(c, "delta")) cfg->controller = CC_CTRL_DELTA;
    else if (word_is(c, "aimd")) cfg->controller = CC_CTRL_AIMD;
    else {
        cc_error("CUDACAP_CONTROLLER=\"%s\" is not one of delta, aimd, auto; using auto", c);
        cfg->errors++;
    }
}

#define BOOL_WHAT "a switch (1/0, true/false, yes/no, on/off)"

static void load_switches(cc_config_t *cfg, const char *(*get)(const char *))
{
    const char *sb = get("CUDACAP_SHARED_BUCKET");
    cfg->shared_bucket = 1;
    if (sb && *sb && cc_parse_bool(sb, &cfg->shared_bucket) != 0) {
        report("CUDACAP_SHARED_BUCKET", sb, -1, BOOL_WHAT, "using the shared bucket", &cfg->errors);
        cfg->shared_bucket = 1;
    }
    const char *cnt = get("CUDACAP_COUNT_CALLS");
    cfg->count_calls = 0;
    if (cnt && *cnt && cc_parse_bool(cnt, &cfg->count_calls) != 0) {
        report("CUDACAP_COUNT_CALLS", cnt, -1, BOOL_WHAT, "not counting calls", &cfg->errors);
        cfg->count_calls = 0;
    }
    const char *oh = get("CUDACAP_CTX_OVERHEAD");
    int rc;
    if (oh && *oh && (rc = cc_parse_size(oh, &cfg->ctx_overhead)) != 0) {
        report("CUDACAP_CTX_OVERHEAD", oh, rc, SIZE_WHAT, "using 0", &cfg->errors);
        cfg->ctx_overhead = 0;
    }
}

void cc_config_load(cc_config_t *cfg, const char *(*get)(const char *), char *const *envp)
{
    memset(cfg, 0, sizeof *cfg);
    load_mem(cfg, get);
    load_sm(cfg, get);
    check_indices(cfg, envp);
    load_state_dir(cfg, get);
    load_controller(cfg, get);
    load_switches(cfg, get);
}

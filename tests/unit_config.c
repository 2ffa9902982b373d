/* Configuration parsing: sizes in every spelling users write, percentages,
 * per-device overrides, HAMi/Volcano names, and bad values that must leave
 * the cap absent (never a different cap). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cap/config_over.h"
#include "common/options.h"
#include "check.h"
#include "cudacap/config.h"

static const char **env_kv; /* NULL-terminated name, value pairs */

static const char *fake_getenv(const char *name)
{
    for (const char **p = env_kv; p && *p; p += 2)
        if (!strcmp(p[0], name)) return p[1];
    return NULL;
}

/* Loads from kv, seen both through getenv and as the environment block,
 * and keeps what the library printed on stderr in msgs. */
static char msgs[16384];

static void load(cc_config_t *c, const char **kv)
{
    static char store[64][1024];
    char *envp[65];
    size_t n = 0;
    for (const char **p = kv; p && *p && n < 64; p += 2, n++) {
        snprintf(store[n], sizeof store[n], "%s=%s", p[0], p[1]);
        envp[n] = store[n];
    }
    envp[n] = NULL;
    env_kv = kv;
    fflush(stderr);
    FILE *tmp = tmpfile();
    int saved = dup(2);
    if (tmp) dup2(fileno(tmp), 2);
    cc_config_load(c, fake_getenv, envp);
    dup2(saved, 2);
    close(saved);
    msgs[0] = 0;
    if (tmp) {
        rewind(tmp);
        size_t got = fread(msgs, 1, sizeof msgs - 1, tmp);
        msgs[got] = 0;
        fclose(tmp);
    }
    fputs(msgs, stderr); /* still visible in the test's log */
}

static int said(const char *text) { return strstr(msgs, text) != NULL; }

static int lines(void)
{
    int n = 0;
    for (const char *p = msgs; *p; p++) n += *p == '\n';
    return n;
}

#define GiB (1ULL << 30)
#define MiB (1ULL << 20)

static void sizes(void)
{
    struct { const char *in; uint64_t want; } good[] = {
        {"4g", 4 * GiB}, {"4G", 4 * GiB}, {"4Gi", 4 * GiB}, {"4GiB", 4 * GiB},
        {"4gb", 4 * GiB}, {"4096m", 4 * GiB}, {"4096Mi", 4 * GiB}, {"4096M", 4 * GiB},
        {"1048576k", GiB}, {"1048576Ki", GiB}, {"4294967296", 4 * GiB}, {"0", 0},
        {"1.5g", GiB + GiB / 2}, {"0.5Gi", GiB / 2}, {" 8g ", 8 * GiB}, {"1t", 1024 * GiB},
        {"123b", 123},
        /* 8+ decimals with t overflowed into a smaller cap. */
        {"0.5000000000000t", 512 * GiB}, {"1.50000000t", 1536 * GiB},
        {"0.99999999t", 1099511616780ULL}, {"0.999999999t", 1099511626676ULL},
        /* A fraction of a byte rounds down (as 0.1g always did). */
        {"0.1g", 107374182}, {"0.3k", 307}, {"0.000000000001t", 1},
        {"1.2345678901234567890123t", 1357421750469ULL}, {"0.9999999999999m", MiB - 1},
        /* Every unit, every spelling, with a fraction. */
        {"1.25k", 1280}, {"1.25K", 1280}, {"1.25Ki", 1280}, {"1.25KiB", 1280}, {"1.25kb", 1280},
        {"2.5m", 5 * MiB / 2}, {"2.5MiB", 5 * MiB / 2}, {"2.5mB", 5 * MiB / 2},
        {"0.75g", 3 * GiB / 4}, {"0.75GIB", 3 * GiB / 4}, {"0.25T", 256 * GiB},
        {"0.25Ti", 256 * GiB}, {"0.25tib", 256 * GiB}, {"2TB", 2048 * GiB},
        /* Many decimals, and trailing zeros that change nothing. */
        {"1.000000000000000000000000000000000000001g", GiB},
        {"0.50000000000000000000000000000000000000000000000000000000000000t", 512 * GiB},
        {"4.0000000000g", 4 * GiB}, {"0.0g", 0}, {"000004g", 4 * GiB},
        /* The largest size, in bytes and as units. */
        {"18446744073709551615", UINT64_MAX}, {"18446744073709551615b", UINT64_MAX},
        {"16777215t", UINT64_MAX - (1ULL << 40) + 1},
        {"16777215.99999999999999999999t", UINT64_MAX},
        {"16777215.999999999999999999999999999999999999999999999999999999t", UINT64_MAX},
        {"17179869183.999999999g", UINT64_MAX - 1}, {"18014398509481983k", UINT64_MAX - 1023},
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        uint64_t v = 1;
        CHECK(cc_parse_size(good[i].in, &v) == 0 && v == good[i].want, "\"%s\" -> %llu, want %llu",
              good[i].in, (unsigned long long)v, (unsigned long long)good[i].want);
    }
    const char *bad[] = {"", "g", "-1g", "4x", "4gig", "4 g g", "1.5", "0x10", "4Gx", ".5g",
                         "4..5g", "4i", "1.g", "1e3g", "+4g", "4g.5", "1.5b", "99999999999999999999x"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        uint64_t v = 7;
        CHECK(cc_parse_size(bad[i], &v) == -1 && v == 7, "\"%s\" accepted as %llu", bad[i],
              (unsigned long long)v);
    }
    /* Above 2^64 - 1 bytes: too large, never wrapped into a smaller cap. */
    const char *big[] = {"18446744073709551616", "99999999999999999999", "20000000000t",
                         "16777216t", "16777216.0t", "16777216.00000000000000000001t",
                         "17179869184g", "18014398509481984k", "17592186044416m",
                         "184467440737095516150000000000000000000000000000b"};
    for (size_t i = 0; i < sizeof big / sizeof big[0]; i++) {
        uint64_t v = 7;
        int rc = cc_parse_size(big[i], &v);
        CHECK(rc == CC_SIZE_TOO_LARGE && v == 7, "\"%s\": %d, %llu", big[i], rc,
              (unsigned long long)v);
    }
    /* Not zero, but less than a byte: never 0, which means no cap. */
    const char *tiny[] = {"0.0000001k", "0.0000000000001t", "0.0000000001g"};
    for (size_t i = 0; i < sizeof tiny / sizeof tiny[0]; i++) {
        uint64_t v = 7;
        int rc = cc_parse_size(tiny[i], &v);
        CHECK(rc == CC_SIZE_BELOW_BYTE && v == 7, "\"%s\": %d, %llu", tiny[i], rc,
              (unsigned long long)v);
    }
}

static void percents(void)
{
    uint32_t v;
    CHECK(cc_parse_percent("30", &v) == 0 && v == 30, "30");
    CHECK(cc_parse_percent("30%", &v) == 0 && v == 30, "30%%");
    CHECK(cc_parse_percent("100", &v) == 0 && v == 100, "100");
    CHECK(cc_parse_percent("0", &v) == 0 && v == 0, "0");
    const char *bad[] = {"101", "-5", "abc", "30.5", "", "5%%", "1e2"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK(cc_parse_percent(bad[i], &v) == -1, "\"%s\" accepted", bad[i]);
}

static void env_names(void)
{
    cc_config_t c;
    /* Our names, all-device plus per-device override. */
    load(&c, (const char *[]){"CUDACAP_MEM_LIMIT", "4g", "CUDACAP_MEM_LIMIT_1", "2g",
                              "CUDACAP_SM_LIMIT", "30", "CUDACAP_SM_LIMIT_2", "50", NULL});
    CHECK(c.errors == 0, "errors %d", c.errors);
    CHECK(c.mem_limit[0] == 4 * GiB && c.mem_limit[1] == 2 * GiB && c.mem_limit[15] == 4 * GiB,
          "mem %llu %llu", (unsigned long long)c.mem_limit[0], (unsigned long long)c.mem_limit[1]);
    CHECK(c.sm_limit[0] == 30 && c.sm_limit[2] == 50, "sm %u %u", c.sm_limit[0], c.sm_limit[2]);
    CHECK(!strcmp(c.state_dir, "/tmp/cudacap"), "default state dir %s", c.state_dir);
    CHECK(c.controller == CC_CTRL_AUTO, "controller");

    /* HAMi's contract: per-device "<MiB>m", SM limit, the cache path. */
    load(&c, (const char *[]){"CUDA_DEVICE_MEMORY_LIMIT_0", "4096m", "CUDA_DEVICE_SM_LIMIT", "25",
                              "CUDA_DEVICE_MEMORY_SHARED_CACHE", "/usr/local/vgpu/abc.cache", NULL});
    CHECK(c.errors == 0, "errors %d", c.errors);
    CHECK(c.mem_limit[0] == 4 * GiB && c.mem_limit[1] == 0, "hami mem %llu",
          (unsigned long long)c.mem_limit[0]);
    CHECK(c.sm_limit[0] == 25 && c.sm_limit[7] == 25, "hami sm");
    CHECK(!strcmp(c.state_dir, "/usr/local/vgpu/abc.cache.d"), "hami state dir %s", c.state_dir);

    /* HAMi's "4Gi" must be 4 GiB, not 4 bytes. */
    load(&c, (const char *[]){"CUDA_DEVICE_MEMORY_LIMIT", "4Gi", NULL});
    CHECK(c.mem_limit[3] == 4 * GiB, "4Gi -> %llu", (unsigned long long)c.mem_limit[3]);

    /* Ours wins over HAMi's when both are set. */
    load(&c, (const char *[]){"CUDACAP_MEM_LIMIT", "1g", "CUDA_DEVICE_MEMORY_LIMIT", "2g",
                              "CUDACAP_STATE_DIR", "/s", "CUDA_DEVICE_MEMORY_SHARED_CACHE", "/c", NULL});
    CHECK(c.mem_limit[0] == GiB, "precedence");
    CHECK(!strcmp(c.state_dir, "/s"), "state dir precedence %s", c.state_dir);

    /* 100 % and "disable" policy mean no compute cap. */
    load(&c, (const char *[]){"CUDACAP_SM_LIMIT", "100", NULL});
    CHECK(c.sm_limit[0] == 0, "100%% is no cap");
    load(&c, (const char *[]){"CUDACAP_SM_LIMIT", "40", "GPU_CORE_UTILIZATION_POLICY", "disable", NULL});
    CHECK(c.sm_limit[0] == 0, "policy disable");

    load(&c, (const char *[]){"CUDACAP_CONTROLLER", "aimd", NULL});
    CHECK(c.controller == CC_CTRL_AIMD && c.errors == 0, "aimd");
    load(&c, (const char *[]){"CUDACAP_CONTROLLER", "delta", NULL});
    CHECK(c.controller == CC_CTRL_DELTA, "delta");
}

static void garbage(void)
{
    cc_config_t c;
    /* A bad all-device value: no cap (never 0 bytes, never a partial parse);
     * a good per-device value still applies. */
    load(&c, (const char *[]){"CUDACAP_MEM_LIMIT", "lots", "CUDACAP_MEM_LIMIT_1", "1g", NULL});
    CHECK(c.errors == 1, "errors %d", c.errors);
    CHECK(c.mem_limit[0] == 0 && c.mem_limit[1] == GiB, "bad all-device");
    /* A bad per-device value: that device falls back to no cap, not to the
     * all-device value, because the operator meant something else for it. */
    load(&c, (const char *[]){"CUDACAP_MEM_LIMIT", "2g", "CUDACAP_MEM_LIMIT_0", "2q", NULL});
    CHECK(c.errors == 1 && c.mem_limit[0] == 0 && c.mem_limit[1] == 2 * GiB, "bad per-device");
    load(&c, (const char *[]){"CUDACAP_SM_LIMIT", "150", "CUDACAP_CONTROLLER", "pid", NULL});
    CHECK(c.errors == 2 && c.sm_limit[0] == 0 && c.controller == CC_CTRL_AUTO, "bad sm/ctrl");
    char longdir[CC_PATH_MAX + 10];
    memset(longdir, 'a', sizeof longdir - 1);
    longdir[0] = '/';
    longdir[sizeof longdir - 1] = 0;
    load(&c, (const char *[]){"CUDACAP_STATE_DIR", longdir, NULL});
    CHECK(c.errors == 1 && c.state_dir[0] == 0, "long dir: no shared state, not /tmp/cudacap");
}

/* nothing is ignored without a message. */
static void silent(void)
{
    cc_config_t c;
    /* Per-device names the loops never read: reported, applied nowhere. */
    load(&c, (const char *[]){"CUDACAP_MEM_LIMIT_99", "1g", "CUDACAP_MEM_LIMIT_16", "1g",
                              "CUDA_DEVICE_MEMORY_LIMIT_00", "1g", "CUDACAP_SM_LIMIT_-1", "20",
                              "CUDA_DEVICE_SM_LIMIT_x", "20", "CUDACAP_MEM_LIMIT_", "1g",
                              "CUDACAP_SM_LIMIT_015", "20", "CUDACAP_MEM_LIMIT_15", "2g",
                              "CUDACAP_SM_LIMIT_7", "", NULL});
    CHECK(c.errors == 7, "bad indices: errors %d", c.errors);
    CHECK(lines() == 7, "one line each: %d", lines());
    const char *names[] = {"CUDACAP_MEM_LIMIT_99=", "CUDACAP_MEM_LIMIT_16=", "CUDA_DEVICE_MEMORY_LIMIT_00=",
                           "CUDACAP_SM_LIMIT_-1=", "CUDA_DEVICE_SM_LIMIT_x=", "CUDACAP_MEM_LIMIT_=",
                           "CUDACAP_SM_LIMIT_015=", "0..15"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        CHECK(said(names[i]), "no \"%s\" in: %s", names[i], msgs);
    for (int i = 0; i < CC_MAX_DEVICES; i++) {
        CHECK(c.mem_limit[i] == (i == 15 ? 2 * GiB : 0), "mem[%d] %llu", i,
              (unsigned long long)c.mem_limit[i]);
        CHECK(c.sm_limit[i] == 0, "sm[%d] %u", i, c.sm_limit[i]);
    }

    /* HAMi's policy values, in any case; garbage is reported and ignored. */
    const char *offs[] = {"disable", "Disable", "DISABLE", " disable "};
    for (size_t i = 0; i < sizeof offs / sizeof offs[0]; i++) {
        load(&c, (const char *[]){"CUDACAP_SM_LIMIT", "40", "GPU_CORE_UTILIZATION_POLICY", offs[i], NULL});
        CHECK(c.sm_limit[0] == 0 && c.errors == 0, "policy \"%s\": %u", offs[i], c.sm_limit[0]);
    }
    const char *ons[] = {"default", "Default", "force", "FORCE", "Force"};
    for (size_t i = 0; i < sizeof ons / sizeof ons[0]; i++) {
        load(&c, (const char *[]){"CUDACAP_SM_LIMIT", "40", "GPU_CORE_UTILIZATION_POLICY", ons[i], NULL});
        CHECK(c.sm_limit[0] == 40 && c.errors == 0, "policy \"%s\": %u", ons[i], c.sm_limit[0]);
    }
    load(&c, (const char *[]){"CUDACAP_SM_LIMIT", "40", "GPU_CORE_UTILIZATION_POLICY", "disabled", NULL});
    CHECK(c.sm_limit[0] == 40 && c.errors == 1, "policy garbage: %u %d", c.sm_limit[0], c.errors);
    CHECK(said("GPU_CORE_UTILIZATION_POLICY=\"disabled\"") && said("default, force, disable"),
          "policy message: %s", msgs);

    /* Counting calls: a real switch, off by default. */
    struct { const char *in; int want; } cnt[] = {
        {"1", 1}, {"true", 1}, {"YES", 1}, {"On", 1}, {"0", 0}, {"false", 0}, {"no", 0},
        {"OFF", 0}, {"False", 0}, {" no ", 0}};
    for (size_t i = 0; i < sizeof cnt / sizeof cnt[0]; i++) {
        load(&c, (const char *[]){"CUDACAP_COUNT_CALLS", cnt[i].in, NULL});
        CHECK(c.count_calls == cnt[i].want && c.errors == 0, "COUNT_CALLS=\"%s\": %d",
              cnt[i].in, c.count_calls);
    }
    load(&c, (const char *[]){NULL});
    CHECK(c.count_calls == 0, "count default");
    load(&c, (const char *[]){"CUDACAP_COUNT_CALLS", "2", NULL});
    CHECK(c.count_calls == 0 && c.errors == 1 && said("CUDACAP_COUNT_CALLS=\"2\""),
          "COUNT_CALLS garbage: %d %d %s", c.count_calls, c.errors, msgs);
    const char *nb[] = {"", "y", "n", "2", "00", "truth", "o"};
    for (size_t i = 0; i < sizeof nb / sizeof nb[0]; i++) {
        int v = 7;
        CHECK(cc_parse_bool(nb[i], &v) == -1 && v == 7, "bool \"%s\" accepted", nb[i]);
    }

    /* A state path too long for the buffer: no shared state at all (""), never
     * the default /tmp/cudacap, and the variable named. */
    char longdir[CC_PATH_MAX + 10];
    memset(longdir, 'a', sizeof longdir - 1);
    longdir[0] = '/';
    longdir[sizeof longdir - 1] = 0;
    load(&c, (const char *[]){"CUDACAP_STATE_DIR", longdir, "CUDA_DEVICE_MEMORY_SHARED_CACHE", "/c", NULL});
    CHECK(c.errors == 1 && c.state_dir[0] == 0, "long dir: %d \"%s\"", c.errors, c.state_dir);
    CHECK(said("CUDACAP_STATE_DIR=\"/aaa") && said("on its own") && lines() == 1, "long dir: %s", msgs);
    char cache[CC_PATH_MAX - 1]; /* 510 bytes, + ".d" is one too many */
    memset(cache, 'b', sizeof cache - 1);
    cache[0] = '/';
    cache[sizeof cache - 1] = 0;
    load(&c, (const char *[]){"CUDA_DEVICE_MEMORY_SHARED_CACHE", cache, NULL});
    CHECK(c.errors == 1 && c.state_dir[0] == 0 && said("CUDA_DEVICE_MEMORY_SHARED_CACHE="),
          "long cache: %d \"%s\" %s", c.errors, c.state_dir, msgs);
    cache[sizeof cache - 2] = 0; /* 509 + 2: fits */
    load(&c, (const char *[]){"CUDA_DEVICE_MEMORY_SHARED_CACHE", cache, NULL});
    CHECK(c.errors == 0 && strlen(c.state_dir) == CC_PATH_MAX - 1, "longest cache %zu",
          strlen(c.state_dir));
    longdir[CC_PATH_MAX - 1] = 0; /* 511 bytes: the longest that fits */
    load(&c, (const char *[]){"CUDACAP_STATE_DIR", longdir, NULL});
    CHECK(c.errors == 0 && !strcmp(c.state_dir, longdir), "longest dir");

    /* Control bytes in a value are escaped, never written raw. */
    load(&c, (const char *[]){"CUDACAP_MEM_LIMIT", "\x1b[31mlots\n\x7f\\", NULL});
    CHECK(c.errors == 1 && c.mem_limit[0] == 0, "escaped value: %d", c.errors);
    CHECK(said("CUDACAP_MEM_LIMIT=\"\\x1b[31mlots\\x0a\\x7f\\\\\"") && !strchr(msgs, 0x1b) &&
          !strchr(msgs, 0x7f) && lines() == 1, "escaping: %s", msgs);
    load(&c, (const char *[]){"CUDACAP_MEM_LIMIT_1\x1b]0;x\x07", "1g", NULL});
    CHECK(c.errors == 1 && said("CUDACAP_MEM_LIMIT_1\\x1b]0;x\\x07=") && !strchr(msgs, 0x1b),
          "escaped name: %s", msgs);

    /* Too large: said so, no cap (never a wrapped, smaller one). */
    load(&c, (const char *[]){"CUDACAP_MEM_LIMIT", "16777216t", "CUDACAP_MEM_LIMIT_2", "1.50000000t", NULL});
    CHECK(c.errors == 1 && c.mem_limit[0] == 0 && c.mem_limit[2] == 1536 * GiB, "too large: %d",
          c.errors);
    CHECK(said("CUDACAP_MEM_LIMIT=\"16777216t\" is larger than the largest size"), "%s", msgs);
    load(&c, (const char *[]){"CUDACAP_CTX_OVERHEAD", "0.0000001k", NULL});
    CHECK(c.errors == 1 && c.ctx_overhead == 0 && said("not 0 but less than one byte"), "tiny: %s", msgs);

    load(&c, (const char *[]){"CUDACAP_CONTROLLER", "AIMD", NULL});
    CHECK(c.controller == CC_CTRL_AIMD && c.errors == 0, "AIMD");
}

static void switches(void)
{
    cc_config_t c;
    load(&c, (const char *[]){NULL});
    CHECK(c.shared_bucket == 1 && c.ctx_overhead == 0 && c.errors == 0, "defaults");
    load(&c, (const char *[]){"CUDACAP_SHARED_BUCKET", "0", "CUDACAP_CTX_OVERHEAD", "512m", NULL});
    CHECK(c.shared_bucket == 0 && c.ctx_overhead == 512 * MiB && c.errors == 0, "set");
    load(&c, (const char *[]){"CUDACAP_SHARED_BUCKET", "off", NULL});
    CHECK(c.shared_bucket == 0, "off");
    load(&c, (const char *[]){"CUDACAP_SHARED_BUCKET", "No", NULL});
    CHECK(c.shared_bucket == 0 && c.errors == 0, "No");
    /* Garbage: the default, and the error counted. */
    load(&c, (const char *[]){"CUDACAP_SHARED_BUCKET", "maybe", "CUDACAP_CTX_OVERHEAD", "big", NULL});
    CHECK(c.shared_bucket == 1 && c.ctx_overhead == 0 && c.errors == 2, "garbage switches");
}

/* Elastic limits: our names and the seed's, per device, and a
 * soft limit below the hard one or without one: an error naming both, the
 * hard cap alone. */
static void soft_limits(void)
{
    cc_config_t c;
    load(&c, (const char *[]){"CUDACAP_SM_LIMIT", "30", "CUDACAP_SM_SOFT_LIMIT", "100",
                              "CUDACAP_SM_SOFT_LIMIT_1", "60", NULL});
    CHECK(c.errors == 0 && lines() == 0, "errors %d: %s", c.errors, msgs);
    CHECK(c.sm_limit[0] == 30 && c.sm_soft_limit[0] == 100 && c.sm_soft_limit[1] == 60 &&
              c.sm_soft_limit[15] == 100, "soft %u %u", c.sm_soft_limit[0], c.sm_soft_limit[1]);
    load(&c, (const char *[]){"CUDA_DEVICE_SM_LIMIT", "20", "CUDA_CORE_SOFT_LIMIT_0", "80", NULL});
    CHECK(c.errors == 0 && c.sm_soft_limit[0] == 80 && c.sm_soft_limit[1] == 0, "seed names");
    /* Ours wins over the seed's. */
    load(&c, (const char *[]){"CUDACAP_SM_LIMIT", "20", "CUDACAP_SM_SOFT_LIMIT", "50",
                              "CUDA_CORE_SOFT_LIMIT", "90", NULL});
    CHECK(c.sm_soft_limit[0] == 50, "precedence %u", c.sm_soft_limit[0]);
    /* Equal: a hard cap. 0: not elastic. */
    load(&c, (const char *[]){"CUDACAP_SM_LIMIT", "40", "CUDACAP_SM_SOFT_LIMIT", "40", NULL});
    CHECK(c.errors == 0 && c.sm_soft_limit[0] == 0 && c.sm_limit[0] == 40, "soft = hard");
    load(&c, (const char *[]){"CUDACAP_SM_LIMIT", "40", "CUDACAP_SM_SOFT_LIMIT", "0", NULL});
    CHECK(c.errors == 0 && c.sm_soft_limit[0] == 0, "soft 0");
    /* Below the hard one: one message naming both, the hard cap alone. */
    load(&c, (const char *[]){"CUDACAP_SM_LIMIT", "40", "CUDA_CORE_SOFT_LIMIT", "30", NULL});
    CHECK(c.errors == 1 && lines() == 1 && c.sm_limit[3] == 40 && c.sm_soft_limit[3] == 0,
          "below: %d %s", c.errors, msgs);
    CHECK(said("CUDA_CORE_SOFT_LIMIT=30 is below CUDACAP_SM_LIMIT=40") &&
              said("running with the hard cap alone"), "%s", msgs);
    load(&c, (const char *[]){"CUDACAP_SM_LIMIT", "40", "CUDACAP_SM_SOFT_LIMIT_2", "10", NULL});
    CHECK(c.errors == 1 && said("CUDACAP_SM_SOFT_LIMIT_2=10 is below CUDACAP_SM_LIMIT=40 on device 2"),
          "%s", msgs);
    /* No hard cap beside it: said, nothing capped. */
    load(&c, (const char *[]){"CUDACAP_SM_SOFT_LIMIT", "70", NULL});
    CHECK(c.errors == 1 && lines() == 1 && c.sm_limit[0] == 0 && c.sm_soft_limit[0] == 0 &&
              said("without a hard SM cap"), "no hard: %s", msgs);
    load(&c, (const char *[]){"CUDACAP_SM_LIMIT", "100", "CUDACAP_SM_SOFT_LIMIT", "100", NULL});
    CHECK(c.errors == 0 && c.sm_soft_limit[0] == 0, "100/100");
    /* Garbage, and an index out of range: said. */
    load(&c, (const char *[]){"CUDACAP_SM_LIMIT", "30", "CUDACAP_SM_SOFT_LIMIT", "lots",
                              "CUDA_CORE_SOFT_LIMIT_16", "50", NULL});
    CHECK(c.errors == 2 && c.sm_soft_limit[0] == 0 && c.sm_limit[0] == 30, "garbage: %s", msgs);
    /* The policy switch turns both off. */
    load(&c, (const char *[]){"CUDACAP_SM_LIMIT", "30", "CUDACAP_SM_SOFT_LIMIT", "90",
                              "GPU_CORE_UTILIZATION_POLICY", "disable", NULL});
    CHECK(c.errors == 0 && c.sm_limit[0] == 0 && c.sm_soft_limit[0] == 0, "disable");
}


/* Every row of the options table (common/options.h) that cc_config_load reads,
 * driven by the table itself, so that a new row is checked without a new
 * test: its CUDACAP_* name wins over its alias (a difference said), a bad
 * value is said with its name, and per-device rows take NAME_15 and refuse
 * NAME_16, under both names. */
static const char *good_value(const cc_option_t *o, int second)
{
    switch (o->kind) {
    case CC_KIND_SIZE: return second ? "2g" : "1g";
    case CC_KIND_PERCENT: return second ? "40" : "30";
    case CC_KIND_SWITCH: return second ? "off" : "on";
    case CC_KIND_ENUM: return o->choices[second].word;
    case CC_KIND_PATH: return second ? "/b" : "/a";
    case CC_KIND_MS: return second ? "20ms" : "5";
    case CC_KIND_RATIO: return second ? "1.5" : "2";
    case CC_KIND_LEVEL:
    case CC_KIND_TEXT:
    case CC_KIND_IGNORED: break;
    }
    return NULL;
}

static void table_rows(void)
{
    cc_config_t c;
    char want[256], n[64], a[64];
    for (int id = 0; id < CC_OPT_COUNT; id++) {
        const cc_option_t *o = &cc_options[id];
        /* not read here (TEXT rows: by their own module, common/fault.c) */
        if (id == CC_OPT_LOG_LEVEL || o->kind == CC_KIND_IGNORED || o->kind == CC_KIND_TEXT) continue;
        const char *v1 = good_value(o, 0), *v2 = good_value(o, 1);
        const char *name = o->name ? o->name : o->alias ? o->alias : o->seed;
        CHECK(v1 && v2 && strcmp(v1, v2) != 0, "row %d: no values to try", id);
        if (!v1 || !v2) continue;
        /* Both names set, differing: ours wins and the alias is said (but
         * for a path whose alias names a file beside it: differs by nature). */
        if (o->name && o->alias) {
            load(&c, (const char *[]){o->name, v1, o->alias, v2, NULL});
            snprintf(want, sizeof want, "%s=\"%s\" differs from %s=\"%s\"; using %s", o->alias, v2,
                     o->name, v1, o->name);
            CHECK(said(want) == !o->alias_suffix, "%s: \"%s\" in: %s", name, want, msgs);
        }
        /* A bad value: an error naming the variable and the value. */
        load(&c, (const char *[]){name, "bad!", NULL});
        snprintf(want, sizeof want, "%s=\"bad!\" is not ", name);
        CHECK(o->kind == CC_KIND_PATH || (c.errors >= 1 && said(want)), "%s bad: %d %s", name,
              c.errors, msgs);
        if (!o->per_device) continue;
        for (int alias = 0; alias < 3; alias++) {
            if (!cc_opt_name(o, alias, 15, n, sizeof n) || !cc_opt_name(o, alias, 16, a, sizeof a))
                continue;
            load(&c, (const char *[]){n, "bad!", NULL});
            CHECK(c.errors >= 1 && said("running device 15 with no cap from it"), "%s: %s", n, msgs);
            load(&c, (const char *[]){a, v1, NULL});
            snprintf(want, sizeof want, "%s=\"%s\": \"16\" is not a device index 0..15", a, v1);
            CHECK(c.errors == 1 && lines() == 1 && said(want), "%s: %d %s", a, c.errors, msgs);
        }
    }
    /* The table's per-device rows are the ones the doc says (and no more). */
    int per = 0;
    for (int id = 0; id < CC_OPT_COUNT; id++) per += cc_options[id].per_device;
    CHECK(per == 6, "%d per-device rows", per);
}

/* CUDACAP_SM_BURST_MS: milliseconds 1..1000 ("ms" allowed); anything else
 * is said, and the default (0) stands. */
static void bursts(void)
{
    cc_config_t c;
    static const struct { const char *v; uint32_t want; int err; } cases[] = {
        {"1", 1, 0}, {"1000", 1000, 0}, {" 20ms ", 20, 0}, {"5MS", 5, 0}, {"0", 0, 1},
        {"1001", 0, 1}, {"-3", 0, 1}, {"2.5", 0, 1}, {"ms", 0, 1}, {"99999999999999999999", 0, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        load(&c, (const char *[]){"CUDACAP_SM_BURST_MS", cases[i].v, NULL});
        CHECK(c.sm_burst_ms == cases[i].want && c.errors == cases[i].err &&
                  (!cases[i].err || said("is not a number of milliseconds 1..1000; using the default")),
              "burst \"%s\": %u, %d errors: %s", cases[i].v, c.sm_burst_ms, c.errors, msgs);
    }
    load(&c, (const char *[]){"CUDACAP_SM_LIMIT", "30", NULL});
    CHECK(c.sm_burst_ms == 0 && c.errors == 0, "burst unset: %u", c.sm_burst_ms);
}

/* Oversubscription (cap/config_over.c): explicit, the seed's ratio and
 * oversold switch, HAMi's switch, and what cannot mean anything. */
static void oversub(void)
{
    cc_config_t c;
    const uint64_t G = 1ull << 30;
    load(&c, (const char *[]){"CUDACAP_MEM_LIMIT", "1g", "CUDACAP_MEM_OVERSUBSCRIBE", "1g",
                              "CUDACAP_MEM_OVERSUBSCRIBE_1", "512m", NULL});
    CHECK(c.errors == 0 && c.mem_limit[0] == G && c.mem_over[0] == G && c.mem_over[1] == G / 2 &&
              c.mem_over[2] == G && !c.mem_spill[0], "explicit: %s", msgs);
    load(&c, (const char *[]){"CUDA_MEM_LIMIT_0", "2g", "CUDA_MEM_RATIO_0", "2", NULL});
    CHECK(c.errors == 0 && c.mem_limit[0] == G && c.mem_over[0] == G && c.mem_limit[1] == 0,
          "seed ratio: %llu + %llu %s", (unsigned long long)c.mem_limit[0],
          (unsigned long long)c.mem_over[0], msgs);
    load(&c, (const char *[]){"CUDA_MEM_LIMIT", "3g", "CUDA_MEM_RATIO", "1.5", NULL});
    CHECK(c.mem_limit[5] == 2 * G && c.mem_over[5] == G, "ratio 1.5 on every device");
    load(&c, (const char *[]){"CUDA_MEM_LIMIT_0", "2g", "CUDA_MEM_RATIO_0", "1", NULL});
    CHECK(c.errors == 0 && c.mem_limit[0] == 2 * G && c.mem_over[0] == 0, "ratio 1: none");
    load(&c, (const char *[]){"CUDA_MEM_LIMIT_0", "2g", "CUDA_MEM_RATIO_0", "2",
                              "CUDACAP_MEM_OVERSUBSCRIBE_0", "256m", NULL});
    CHECK(c.mem_limit[0] == 2 * G && c.mem_over[0] == G / 4 && said("CUDA_MEM_RATIO is ignored"),
          "explicit wins: %s", msgs);
    load(&c, (const char *[]){"CUDA_MEM_LIMIT_0", "2g", "CUDA_MEM_RATIO_0", "0.5", NULL});
    CHECK(c.errors == 1 && c.mem_over[0] == 0 && said("is not a ratio of at least 1"), "ratio 0.5: %s", msgs);
    load(&c, (const char *[]){"CUDACAP_MEM_OVERSUBSCRIBE", "1g", NULL});
    CHECK(c.errors == 1 && c.mem_over[0] == 0 && lines() == 1 && said("without a memory cap"),
          "no cap: %s", msgs);
    load(&c, (const char *[]){"CUDA_MEM_RATIO_0", "2", NULL});
    CHECK(c.errors == 1 && said("CUDA_MEM_RATIO without CUDA_MEM_LIMIT"), "ratio, no cap: %s", msgs);
    load(&c, (const char *[]){"CUDA_MEM_LIMIT_0", "2g", "CUDA_MEM_OVERSOLD_0", "true", NULL});
    CHECK(c.errors == 0 && c.mem_spill[0] && !c.mem_spill[1] && c.mem_over[0] == 0, "oversold");
    load(&c, (const char *[]){"CUDA_DEVICE_MEMORY_LIMIT", "60g", "CUDA_OVERSUBSCRIBE", "true", NULL});
    CHECK(c.errors == 0 && c.mem_spill[0] && c.mem_spill[15], "HAMi's switch: %s", msgs);
    uint64_t cap = 60 * G, over = 0;
    cc_config_over_resolve(&cap, &over, 1, 24 * G);
    CHECK(cap == 24 * G && over == 36 * G, "spill at bind: %llu %llu", (unsigned long long)cap,
          (unsigned long long)over);
    cap = 8 * G, over = G;
    cc_config_over_resolve(&cap, &over, 1, 24 * G);
    CHECK(cap == 8 * G && over == G, "spill on a larger card: nothing");
}

int main(void)
{
    oversub();
    table_rows();
    bursts();
    soft_limits();
    switches();
    sizes();
    percents();
    env_names();
    garbage();
    silent();
    CHECK_EXIT();
}
